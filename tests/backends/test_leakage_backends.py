"""No gold label reaches any memory system: for each built-in backend that takes sessions as
they are, two sample questions are ingested and answered through the harness's own steps, and
everything handed over is recorded on the way in: every protocol call's arguments (titles,
session keys, dates, turns, queries) and every prompt the system's own model received.

Then a shared build of each benchmark that has them (a LoCoMo conversation, a BEAM chat)
through every built-in backend in every ingestion mode it takes, recorded the same way plus
every request of the memory agent and of the reader (read at the model call) and, for the MCP
backends, every byte sent to the server (tests/backends/leak_samples.py names the gold)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.configured import ConfiguredBackend
from lme_bench.backends.protocol import MemorySystem
from lme_bench.config.settings import load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import fake_policy
from lme_bench.providers.memory_model import MemoryModel
from lme_bench.providers.retry import RetryPolicy
from lme_bench.run.steps import (
    answer_question,
    bundled_sample,
    evaluate_question,
    ingest_question,
    plan_run,
    prepare_questions,
    qa_panel,
)
from tests.backends.conftest import REPO
from tests.backends.leak_recording import CallRecorder, record_model_requests
from tests.backends.leak_samples import beam_folder, locomo_file
from tests.backends.test_mcp_tools import recorded, shipped_params
from tests.wire.capture import http_sent, stdio_sent
from tests.wire.servers import RecordingHttpServer

BACKENDS = {  # backend -> (its params, the fake policy of its own model, the module it needs)
    "mem0": ({"infer": True}, "mem0-extractor", "mem0"),
    "langgraph": ({"store": "sqlite", "extract": "langmem"}, "langmem-extractor", "langmem"),
    "graphiti": ({}, "graphiti-extractor", "graphiti_core"),
}


class Recorder:
    """Wraps a MemorySystem and keeps every argument it is handed."""

    def __init__(self, system: MemorySystem, log: list[Any]) -> None:
        self.system, self.log = system, log

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.system, name)
        if name not in {"open_memory", "ingest_session", "search"}:
            return found

        async def recorded(*args: Any, **kwargs: Any) -> Any:
            shown = [asdict(a) if hasattr(a, "__dataclass_fields__") else a for a in args]
            self.log.append({"call": name, "args": shown, "kwargs": kwargs})
            return await found(*args, **kwargs)

        return recorded


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_nothing_gold_reaches_the_system_or_its_model(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params, policy, module = BACKENDS[backend]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"the {backend} extra is not installed (make install-all)")
    model = ScriptedChatModel(script=[fake_policy(policy)])
    log: list[Any] = []
    opened = ConfiguredBackend.open  # the stages' own, wrapped to record what they hand over

    def recording(memory: ConfiguredBackend) -> Any:
        return Recorder(opened(memory), log)

    monkeypatch.setattr(
        "lme_bench.providers.memory_model.memory_model",
        lambda settings: MemoryModel(model, RetryPolicy(), None, None),
    )
    monkeypatch.setattr(ConfiguredBackend, "open", recording)
    settings = load_settings(
        None,
        **{
            "run.results_dir": str(tmp_path),
            "run.id": "leak",
            "memory.backend": backend,
            "memory.params": params,
            "models.memory": f"fake:{policy}",
            "models.qa": "fake:quote-memory",
            "models.judge": "none",
            "run.stages": ["ingest", "answer"],
        },
    )
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=2)
    for ref in refs:
        outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
        asyncio.run(answer_question(ref, outcome.memory_id, qa_panel(settings)))

    assert {entry["call"] for entry in log} == {"open_memory", "ingest_session", "search"}
    assert model.calls, "the system's own model was never called"
    handed = json.dumps(log) + "\n".join(
        str(message.content) for call in model.calls for message in call.messages
    )
    chosen = {ref.question_id for ref in refs}
    instances = [q.instance for q in iter_questions(bundled_sample())]
    haystack = "\n".join(t.content for i in instances for s in i.haystack_sessions for t in s)
    assert "has_answer" not in handed and "_abs" not in handed and "answer_" not in handed
    for instance in instances:
        assert instance.question_id not in handed
        for session_id in instance.haystack_session_ids:
            assert f'"{session_id}"' not in handed
        if instance.question_id in chosen and instance.answer not in haystack:
            assert instance.answer not in handed, instance.question_id


# Shared builds (LoCoMo: one memory for a conversation's questions, two named speakers whose
# turns are all "user" turns; BEAM: one memory for a chat's probing questions) through every
# built-in backend and every ingestion mode it takes.
SHARED_CASES: dict[str, tuple[str, str, dict[str, Any], str | None, str | None]] = {
    # case -> (backend, [ingest] mode, [memory.params], [models] memory, [models] agent)
    "embedded-raw": ("embedded", "raw", {}, None, None),
    "embedded-context-only": ("embedded", "context-only", {}, None, "fake:note-taker"),
    "embedded-agentic": ("embedded", "agentic", {}, None, "fake:note-taker"),
    "mcp-raw": ("mcp", "raw", {}, None, None),
    "mcp-context-only": ("mcp", "context-only", {}, None, "fake:note-taker"),
    "mcp-agentic": ("mcp", "agentic", {}, None, "fake:note-taker"),
    "mem0-raw": ("mem0", "raw", {"infer": True}, "fake:mem0-extractor", None),
    "mem0-turns-raw": ("mem0", "raw", {"infer": False}, None, None),
    "langgraph-langmem-raw": (
        "langgraph",
        "raw",
        {"store": "sqlite", "extract": "langmem"},
        "fake:langmem-extractor",
        None,
    ),
    "langgraph-turns-raw": ("langgraph", "raw", {"store": "sqlite", "extract": "none"}, None, None),
    "graphiti-raw": ("graphiti", "raw", {}, "fake:graphiti-extractor", None),
    "mcp-tools-raw": ("mcp-tools", "raw", {}, None, None),
    "mcp-tools-agentic": ("mcp-tools", "agentic", {}, None, "fake:kg-note-taker"),
}
NEEDS = {"mem0": "mem0", "langgraph": "langgraph", "graphiti": "graphiti_core"}
SAMPLES = {"locomo": locomo_file, "beam": beam_folder}
USER_AND_ASSISTANT = re.compile(r"a user\s+and an AI assistant")  # the agent's instructions


def _server_params(
    case: str, backend: str, tmp_path: Path, request: pytest.FixtureRequest, stack: ExitStack
) -> tuple[dict[str, Any], Path]:
    """The [memory.params] of a backend over a recording MCP server, and its wire log."""
    wire = tmp_path / "wire.log"
    if backend == "mcp":
        server = RecordingHttpServer(tmp_path / "server")
        server.start(wire)
        stack.callback(server.stop)
        return server.settings().model_dump(mode="json"), wire
    config = "mcp-knowledge-graph-agent.toml" if "agentic" in case else "mcp-knowledge-graph.toml"
    script = request.getfixturevalue("server_script")
    params = recorded(script, shipped_params(REPO / "configs" / config))
    params["env"]["MEMORY_FILE_PATH"] = "{data_dir}/{memory}.jsonl"
    return params, tmp_path / "backends" / "mcp-tools"  # one wire-<memory>.log per memory


def _wire_text(backend: str, wire: Path) -> str:
    if backend == "mcp":
        text, messages = http_sent(wire)
        return text + json.dumps(messages, ensure_ascii=False)
    if backend == "mcp-tools":
        logs = sorted(wire.glob("wire-*.log"))
        assert logs, "nothing went to the server"
        sent = [stdio_sent(log) for log in logs]
        return "\n".join(t + json.dumps(m, ensure_ascii=False) for t, m in sent)
    return ""


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", sorted(SAMPLES))
@pytest.mark.parametrize("case", sorted(SHARED_CASES))
def test_no_gold_of_a_shared_build_reaches_any_backend_its_models_or_the_reader(
    benchmark: str,
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    backend, mode, params, memory_model, agent_model = SHARED_CASES[case]
    if backend in NEEDS and importlib.util.find_spec(NEEDS[backend]) is None:
        pytest.skip(f"the {backend} extra is not installed (make install-all)")
    data, gold, common_words = SAMPLES[benchmark](tmp_path / "data")
    requests = record_model_requests(monkeypatch)
    log: list[Any] = []
    opened = ConfiguredBackend.open

    def recording(memory: ConfiguredBackend) -> Any:
        return CallRecorder(opened(memory), log)

    monkeypatch.setattr(ConfiguredBackend, "open", recording)
    with ExitStack() as stack:
        wire = None
        if backend in {"mcp", "mcp-tools"}:
            params, wire = _server_params(case, backend, tmp_path, request, stack)
        overrides: dict[str, Any] = {
            "run.results_dir": str(tmp_path),
            "run.id": "leak",
            "dataset.path": str(data),
            "memory.backend": backend,
            "memory.params": params,
            "ingest.mode": mode,
            "models.qa": "fake:quote-memory",
            "models.judge": "none",
            "run.stages": ["ingest", "retrieval", "answer"],
        }
        for role, model in (("memory", memory_model), ("agent", agent_model)):
            if model is not None:
                overrides[f"models.{role}"] = model
        settings = load_settings(None, **overrides)
        plan = plan_run(settings)
        _, refs = prepare_questions(plan)
        assert len(refs) >= 5 and len({r.build for r in refs}) == 1
        memories = set()
        for ref in refs:
            outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
            memories.add(outcome.memory_id)
            rows = asyncio.run(evaluate_question(ref, outcome, settings))
            assert all(row.status != "error" for row in rows), (ref.question_id, rows)
            answer = asyncio.run(answer_question(ref, outcome.memory_id, qa_panel(settings)))
            assert answer.status == "ok", (ref.question_id, answer.error)
        assert len(memories) == 1  # the build's questions share its memory
    wire_text = _wire_text(backend, wire) if wire is not None else ""

    calls = {entry["call"] for entry in log}
    assert "search" in calls or "search_entries" in calls, calls
    readers = [r for r in requests if r["model"] == "quote-memory"]
    assert len(readers) == len(refs)  # the reader's own prompts, one per question
    assert all("Question:" in r["prompt"] or "?" in r["prompt"] for r in readers)
    if memory_model is not None:
        assert any(r["model"] == memory_model.removeprefix("fake:") for r in requests)
    if agent_model is not None:
        assert any(r["model"] == agent_model.removeprefix("fake:") for r in requests)
    ours = [r for r in requests if r["model"] != (memory_model or "").removeprefix("fake:")]
    sources = {
        "protocol calls": json.dumps(log, ensure_ascii=False),
        "wire": wire_text,
        "the reader's and the memory agent's requests": json.dumps(ours, ensure_ascii=False),
        "the system's own model's requests": json.dumps(requests, ensure_ascii=False),
    }
    gold += ["answer_", "has_answer", *(r.question_id for r in refs)]
    leaked = sorted((where, g) for where, text in sources.items() for g in gold if g in text)
    # Gold words such as "temporal" are words of mem0's and Graphiti's own instructions: they
    # are sought only in what lme-bench composes (every call, the wire, its models' prompts).
    for where in list(sources)[:3]:
        leaked += [(where, g) for g in common_words if g in sources[where]]
    assert leaked == []
    sent = [entry["args"] for entry in log if entry["call"] == "ingest_session"]
    agents = [r["prompt"] for r in requests if r["model"] == (agent_model or "")[5:]]
    if benchmark == "locomo":
        _speakers_are_named(backend, log, requests, wire_text)
    else:  # user and assistant turns: no speaker, the memory agent's instructions as ever
        assert all("'speaker': None" in args for args in sent)
        assert all(USER_AND_ASSISTANT.search(agent) for agent in agents)


def _speakers_are_named(
    backend: str, log: list[Any], requests: list[dict[str, Any]], wire_text: str
) -> None:
    """LoCoMo's two people reach the memory side by name: in each turn's text, as
    `Turn.speaker`, in the memory agent's instructions and in Graphiti's episodes."""
    given = json.dumps(log, ensure_ascii=False) + wire_text
    assert "Ada: I adopted a greyhound called Pip." in given  # both speakers, by name
    assert "Ben: I started violin and clarinet." in given
    sent = [entry["args"] for entry in log if entry["call"] == "ingest_session"]
    assert all("'speaker': 'Ada'" in args for args in sent)  # and as Turn.speaker
    agents = [r["prompt"] for r in requests if r["model"] in {"note-taker", "kg-note-taker"}]
    for agent in agents:
        assert "between Ada and Ben" in agent and not USER_AND_ASSISTANT.search(agent)
    if backend == "graphiti":  # episodes of "Ada: …" lines, not "user: Ada: …"
        assert "user: Ada:" not in json.dumps(requests, ensure_ascii=False)
