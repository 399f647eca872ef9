"""Runs of the `benchmark/smoke` deployment as a user starts them, and reading them back
through the Prefect API: a run config whose models are a loopback fake OpenAI server, the
`prefect deployment run` command, flow runs, task runs and artifacts."""

from __future__ import annotations

import json
import re
import subprocess
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterType,
    FlowRunFilter,
    FlowRunFilterId,
)
from prefect.client.schemas.objects import Artifact, FlowRun, TaskRun
from prefect.settings import PREFECT_API_URL, temporary_settings

from tests.integration.prefect_server import PrefectStack
from tests.providers.fake_openai_server import FakeOpenAI

KEY_ENV = "IT_FAKE_LLM_API_KEY"  # set in the worker's environment only
KEY_VALUE = "it-fake-llm-key-0123456789"
DEPLOYMENT = "benchmark/smoke"
READER = "it-reader"
WORSE_READER = "it-worse-reader"  # a config naming it answers worse (Replies)
STAGE_PREFIXES = ("ingest ", "retrieval ", "answer ", "judge ")


@dataclass
class FakeLlm:
    base_url: str
    fake: FakeOpenAI
    replies: Replies


@dataclass
class CompletedRun:
    """The first run of `it-1` on the smoke deployment, and what it cost the fake model."""

    cli: subprocess.CompletedProcess[str]
    flow_run: UUID
    folder: Path  # config, memory file and results
    config: Path
    run_dir: Path
    first_request: int  # index of the run's first request in the fake's records
    llm_requests: int


def prompt_text(body: dict[str, Any]) -> str:
    """Every message of a chat request as one text (content strings or content parts)."""
    parts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def _question(prompt: str) -> str:
    """The question a reader's prompt asks (its `Question:` line)."""
    return prompt.split("Question: ", 1)[-1].split("\n", 1)[0].strip()


class Replies:
    """The fake's reply to every request: "yes" (as the answer and as the verdict), or a
    permanent HTTP 400 when the prompt holds one of the `failing` texts. The reader
    `WORSE_READER` answers "no" to about half of the questions (those whose text hashes odd),
    and the judge finds a "no" wrong."""

    def __init__(self) -> None:
        self.failing: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = prompt_text(body)
        if any(f in text for f in self.failing):
            return {"status": 400, "message": "the fake rejects this prompt"}
        if body.get("model") == WORSE_READER and zlib.crc32(_question(text).encode()) % 2:
            return {"content": "no"}
        if "\nModel response: no\n" in text:  # the judge's prompt (lme_bench/judge/prompts)
            return {"content": "no"}
        return {"content": "yes"}


def requests_since(fake: FakeOpenAI, start: int) -> list[dict[str, Any]]:
    return list(fake.requests[start:])


def write_config(folder: Path, base_url: str, reader: str = READER, name: str = "it.toml") -> Path:
    """Embedded memory, raw ingestion, QA (by `reader`) and judge on the fake; everything
    under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        f"""[memory]
backend = "embedded"

[memory.params]
path = "{folder / "memory.sqlite"}"
vault = "it-vault"

[ingest]
mode = "raw"

[models]
qa = "fakeai:{reader}"
judge = "fakeai:it-judge"
retry_attempts = 2

[providers.fakeai]
kind = "openai-compatible"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"

[qa]
strategy = "single"

[run]
results_dir = "{folder / "results"}"
""",
        encoding="utf-8",
    )
    return path


def deployment_run(
    stack: PrefectStack, config: Path, run_id: str, limit: int, timeout: float = 240.0
) -> subprocess.CompletedProcess[str]:
    """`prefect deployment run 'benchmark/smoke' --watch --params …`, as users type it."""
    request = {"config": str(config), "run_id": run_id, "limit": limit}
    params = json.dumps({"request": request})
    return stack.prefect(
        "deployment", "run", DEPLOYMENT, "--watch", "--params", params, timeout=timeout
    )


def flow_run_id(output: str) -> UUID:
    found = re.search(r"UUID:\s*([0-9a-f-]{36})", output)
    if found is None:
        raise AssertionError(f"no flow run UUID in the CLI output:\n{output}")
    return UUID(found.group(1))


@contextmanager
def api_client(stack: PrefectStack) -> Iterator[SyncPrefectClient]:
    """A client of the test server (the setting is in place before the client is made)."""
    with temporary_settings({PREFECT_API_URL: stack.api_url}), get_client(sync_client=True) as c:
        yield c


def read_flow_run(stack: PrefectStack, run: UUID) -> FlowRun:
    with api_client(stack) as client:
        return client.read_flow_run(run)


def wait_for_attempt(stack: PrefectStack, run: UUID, attempt: int, timeout: float) -> FlowRun:
    """Poll until the flow run's `attempt`-th run reached a final state."""
    deadline = time.monotonic() + timeout
    while True:
        found = read_flow_run(stack, run)
        if found.run_count >= attempt and found.state is not None and found.state.is_final():
            return found
        if time.monotonic() > deadline:
            state = found.state.name if found.state else None
            raise TimeoutError(f"flow run {run}: attempt {attempt} not final, state {state}")
        time.sleep(1.0)


def task_runs(stack: PrefectStack, run: UUID) -> list[TaskRun]:
    flow_runs = FlowRunFilter(id=FlowRunFilterId(any_=[run]))
    with api_client(stack) as client:
        return client.read_task_runs(flow_run_filter=flow_runs, limit=200)


def question_task_runs(stack: PrefectStack, run: UUID, attempt: int) -> list[TaskRun]:
    """The per-question task runs (ingest, retrieval, answer, judge) of one attempt."""
    return [
        t
        for t in task_runs(stack, run)
        if t.name.startswith(STAGE_PREFIXES) and t.flow_run_run_count == attempt
    ]


def artifacts(stack: PrefectStack, run: UUID) -> dict[str, Artifact]:
    """The flow run's artifacts by key (the latest of each key)."""
    only = ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run]))
    with api_client(stack) as client:
        found = client.read_artifacts(artifact_filter=only)
    by_key: dict[str, Artifact] = {}
    for artifact in sorted(found, key=lambda a: a.created or 0):
        if artifact.key:
            by_key[artifact.key] = artifact
    return by_key


def artifact_list(stack: PrefectStack, run: UUID) -> list[Artifact]:
    """Every artifact the server holds for the flow run but Prefect's result records, each
    version of a key included: what the run's Artifacts tab lists (its query), oldest first."""
    only = ArtifactFilter(
        flow_run_id=ArtifactFilterFlowRunId(any_=[run]),
        type=ArtifactFilterType(not_any_=["result"]),
    )
    with api_client(stack) as client:
        found = client.read_artifacts(artifact_filter=only)
    return sorted(found, key=lambda a: a.created or 0)
