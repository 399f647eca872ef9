"""Whole runs against model servers that keep their connections open, as every real provider
does: the benchmark flow in one process, many tasks, each on an event loop of its own, in every
ingestion mode, with answering and judging; the memory system's own model; Bedrock. Every
question completes, connections are reused, and every request carries an output cap."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.extras import skip_without_extra
from tests.faults.throttling_llm import ThrottlingPolicies
from tests.providers.fake_bedrock_server import serve_bedrock
from tests.providers.fake_openai_server import FakeOpenAI, serve

pytestmark = pytest.mark.slow

QUESTIONS = 6


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def llm() -> Iterator[tuple[str, FakeOpenAI]]:
    """A keep-alive OpenAI-compatible server answering like `fake:<model>`."""
    with serve([ThrottlingPolicies(share=0.0, seed=0)]) as found:
        yield found


def _run(tmp_path: Path, url: str, config: str = "configs/default.toml", **overrides: Any) -> Path:
    settings = {
        "providers.llm": {"kind": "openai-compatible", "base_url": url},
        "models.qa": "llm:quote-memory",
        "models.judge": "llm:match-judge",
        "limits.ingest": 3,
        "limits.answer": 3,
        "limits.judge": 3,
    }
    request = RunRequest(
        config=config,
        results_dir=str(tmp_path),
        run_id="keep-alive",
        limit=QUESTIONS,
        overrides=settings | overrides,
    )
    benchmark(request)  # raises RunFailures if any question failed
    return tmp_path / "keep-alive"


def _check_run(run_dir: Path) -> None:
    hypotheses = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == QUESTIONS
    assert [h["status"] for h in hypotheses] == ["ok"] * QUESTIONS
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    llm_scores = [s for s in scores if s["judge_kind"] == "llm"]
    assert len(llm_scores) == QUESTIONS and all(s["status"] == "ok" for s in llm_scores)
    ingest = pq.read_table(run_dir / "ingest.parquet").to_pylist()
    assert ingest and all(r["status"] == "ok" for r in ingest)


def _check_requests(fake: FakeOpenAI, reused: bool = True) -> None:
    # where a task made several calls, the server kept a connection open and the client
    # reused it (a raw run's tasks call once each: one connection per task)
    assert (fake.connections < len(fake.requests)) == reused
    for body in fake.requests:
        judge = body["model"] == "match-judge"
        assert body["max_tokens"] == (10 if judge else body["max_tokens"]) > 0, body["model"]


@pytest.mark.parametrize("mode", ["raw", "context-only", "agentic"])
def test_every_ingestion_mode_answers_and_judges_over_kept_alive_connections(
    harness: None, tmp_path: Path, llm: tuple[str, FakeOpenAI], mode: str
) -> None:
    url, fake = llm
    run_dir = _run(tmp_path, url, **{"ingest.mode": mode, "models.agent": "llm:note-taker"})
    _check_run(run_dir)
    _check_requests(fake, reused=mode != "raw")
    agent_calls = [b for b in fake.requests if b["model"] == "note-taker"]
    assert (len(agent_calls) > 0) == (mode != "raw")
    assert all(b["max_tokens"] == 2048 for b in agent_calls)  # the agent's default cap
    # the call that writes the context must call put_context; the others may call a tool
    choices = {json.dumps(b["tool_choice"], sort_keys=True) for b in agent_calls}
    forced = json.dumps({"function": {"name": "put_context"}, "type": "function"}, sort_keys=True)
    expected = {"raw": set(), "context-only": {forced}, "agentic": {forced, '"auto"'}}
    assert choices == expected[mode]


@skip_without_extra("mem0")
def test_a_memory_systems_own_model_over_kept_alive_connections(
    harness: None, tmp_path: Path, llm: tuple[str, FakeOpenAI]
) -> None:
    url, fake = llm
    run_dir = _run(tmp_path, url, "configs/mem0.toml", **{"models.memory": "llm:mem0-extractor"})
    _check_run(run_dir)
    _check_requests(fake)
    extractions = [b for b in fake.requests if b["model"] == "mem0-extractor"]
    assert extractions and all(b["max_tokens"] == 4096 for b in extractions)


def test_bedrock_answers_over_kept_alive_connections(
    harness: None, tmp_path: Path, llm: tuple[str, FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    url, _ = llm
    with serve_bedrock(["ok"]) as (endpoint, bedrock):
        run_dir = _run(
            tmp_path,
            url,
            **{
                "providers.aws": {"kind": "bedrock", "base_url": endpoint, "region": "us-east-1"},
                "models.qa": "aws:anthropic.claude-3-5-haiku",
            },
        )
        _check_run(run_dir)
        assert bedrock.requests == QUESTIONS and bedrock.connections < QUESTIONS
