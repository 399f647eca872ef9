"""The judge stage through Anthropic's Message Batches API, against a loopback server speaking
it: the Messages bodies the call-by-call judge sends go in one batch, the rows equal the
call-by-call rows (timing aside), errored and expired items are judged call by call."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import Settings, load_settings
from lme_bench.judge.batch_job_stage import JudgeItem, judge_in_batch_jobs
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.stage import judge_question
from lme_bench.providers.batch_jobs.anthropic_jobs import AnthropicBatchJobApi, parse_results
from lme_bench.providers.batch_jobs.protocol import BatchRequest
from lme_bench.results.batch_jobs import read_jobs
from lme_bench.results.qa_tables import ScoreRow
from tests.judge.test_batch_job_stage import _items
from tests.providers.fake_anthropic_batch_server import (
    FakeAnthropicBatches,
    serve_anthropic_batches,
)
from tests.providers.fake_anthropic_server import API_KEY

KEY_ENV = "IT_ANTHROPIC_BATCH_KEY"


def _settings(tmp_path: Path, base_url: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    config = tmp_path / "anthropic.toml"
    config.write_text(
        '[models]\njudge = "claude:claude-sonnet-4-5"\n'
        f'[providers.claude]\nkind = "anthropic"\nbase_url = "{base_url}"\n'
        f'api_key_env = "{KEY_ENV}"\n'
        "[judge]\nbatch = true\nbatch_poll_s = 0.01\n"
    )
    overrides = {"run.results_dir": str(tmp_path / "results"), "run.id": "claude"}
    return load_settings(config, **overrides)


def _comparable(rows: dict[str, list[ScoreRow]]) -> dict[str, list[dict[str, Any]]]:
    return {
        q: [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in found]
        for q, found in rows.items()
    }


def _call_by_call(items: list[JudgeItem], settings: Settings) -> dict[str, list[ScoreRow]]:
    return {
        i.ref.question_id: asyncio.run(judge_question(i.ref, i.hypothesis, judge_panel(settings)))
        for i in items
    }


@pytest.mark.parametrize(
    ("fake", "redone", "state"),
    [
        (FakeAnthropicBatches(), 0, "completed"),
        (FakeAnthropicBatches(failing={0, 2}, expire_after=5), 3, "expired"),
    ],
)
def test_rows_equal_the_call_by_call_rows(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake: FakeAnthropicBatches,
    redone: int,
    state: str,
) -> None:
    with serve_anthropic_batches(fake) as (base_url, served):
        settings = _settings(tmp_path, base_url, monkeypatch)
        items = _items(settings)
        batched = judge_in_batch_jobs(
            items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        assert len(served.message_requests) == redone
        connections = served.connections
        (batch,) = served.batches.values()
        sent = [r["params"] for r in batch.requests]
        live = _call_by_call(items, settings)
    assert _comparable(batched) == _comparable(live)
    assert sent == served.message_requests[redone:]  # the bodies the judge sends
    assert {r.label for rows in batched.values() for r in rows if r.judge_kind == "llm"} == {
        True,
        False,
    }
    (job,) = read_jobs(tmp_path / "run")
    assert (job.api, job.state, len(job.redone), job.price_factor) == (
        "anthropic",
        state,
        redone,
        0.5,
    )
    assert connections <= 1 + redone  # the batch's calls kept one connection alive


def test_the_client_follows_the_batch_to_its_results(tmp_path: Path) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
    with serve_anthropic_batches() as (base_url, _):
        api = AnthropicBatchJobApi(API_KEY, base_url, 10.0)
        job_id = api.submit([BatchRequest("a1", body), BatchRequest("b2", body)], "test")
        statuses = [api.status(job_id) for _ in range(3)]
        results = api.results(job_id)
        api.close()
    assert [s.provider_status for s in statuses] == ["in_progress", "in_progress", "ended"]
    assert statuses[-1].counts["succeeded"] == 2 and statuses[-1].final
    assert sorted(results) == ["a1", "b2"]
    assert api.message(results["a1"].reply or {}).content in ("yes", "no")


def test_results_lines_name_each_outcome() -> None:
    text = (
        '{"custom_id": "a", "result": {"type": "errored", "error": {"type": "error", "error":'
        ' {"type": "invalid_request_error", "message": "bad"}}}}\n'
        '{"custom_id": "b", "result": {"type": "expired"}}\n'
        '{"custom_id": "c", "result": {"type": "canceled"}}\n'
    )
    found = parse_results(text)
    assert found["a"].error == "invalid_request_error: bad" and not found["a"].expired
    assert found["b"].expired and found["c"].error == "canceled"
    with pytest.raises(ValueError, match="line 1"):
        parse_results("{}\n")
