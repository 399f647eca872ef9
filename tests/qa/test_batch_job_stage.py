"""The answer stage through OpenAI's Batch API, against a loopback server speaking it: after
the searches, the reader requests go as one job with the bodies the QA model's client sends,
and the hypotheses equal those of call-by-call answers (timing aside); what the job failed is
answered call by call."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.qa.batch_job_stage import AnswerItem, answer_in_batch_jobs, take_requests
from lme_bench.qa.panel import qa_panel
from lme_bench.qa.stage import answer_question
from lme_bench.results.batch_jobs import read_jobs
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.run.steps import ingest_question, plan_run, prepare_questions
from tests.providers.fake_batch_server import FakeBatchJobApi, serve_batches

TIMING = {"seconds", "search_seconds"}


def _settings(tmp_path: Path, base_url: str, **extra: Any) -> Settings:
    config = tmp_path / "batch.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[memory.params]\n'
        f'path = "{tmp_path / "memory.sqlite"}"\n'
        '[models]\nqa = "lab:gpt-4o-mini"\njudge = "none"\n'
        f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{base_url}"\n'
        '[qa]\nstrategy = "single"\nbatch = true\nbatch_poll_s = 0.01\n'
    )
    overrides = {"run.results_dir": str(tmp_path / "results"), "run.id": "qa"} | extra
    return load_settings(config, **overrides)


def _items(settings: Settings, limit: int = 5) -> list[AnswerItem]:
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=limit)
    outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    return [AnswerItem(r, o.memory_id) for r, o in zip(refs, outcomes, strict=True)]


def _comparable(rows: list[Any]) -> list[dict[str, Any]]:
    assert all(isinstance(r, HypothesisRow) for r in rows)
    return [{k: v for k, v in asdict(r).items() if k not in TIMING} for r in rows]


def _call_by_call(items: list[AnswerItem], settings: Settings) -> list[HypothesisRow]:
    qa = qa_panel(settings)
    return [asyncio.run(answer_question(i.ref, i.memory_id, qa)) for i in items]


def test_hypotheses_equal_the_call_by_call_answers(tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings)
        batched = answer_in_batch_jobs(
            items, qa_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        assert not fake.chat_requests
        (batch,) = fake.batches.values()
        sent = [json.loads(x) for x in fake.files[batch.input_file_id][2].splitlines()]
        live = _call_by_call(items, settings)
    assert _comparable(batched) == _comparable(live)
    assert [line["body"] for line in sent] == fake.chat_requests  # the same bodies
    assert all(r.hypothesis for r in live if isinstance(r, HypothesisRow))
    (job,) = read_jobs(tmp_path / "run", "answer")
    assert (job.state, len(job.answered), job.redone) == ("completed", 5, [])


def test_failed_items_are_answered_call_by_call(tmp_path: Path) -> None:
    with serve_batches(FakeBatchJobApi(failing={0}, expire_after=4)) as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings)
        batched = answer_in_batch_jobs(
            items, qa_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        redone = len(fake.chat_requests)
        live = _call_by_call(items, settings)
    assert redone == 2
    assert _comparable(batched) == _comparable(live)
    (job,) = read_jobs(tmp_path / "run", "answer")
    assert (job.state, len(job.answered), len(job.redone)) == ("expired", 3, 2)


def test_only_single_strategy_answers_go_in_a_batch(tmp_path: Path) -> None:
    with serve_batches() as (base_url, _):
        settings = _settings(tmp_path, base_url, **{"qa.strategy": "two-pass"})
    with pytest.raises(ConfigError, match="strategy = 'single'"):
        plan_run(settings)  # before any work
    with pytest.raises(ConfigError, match="strategy = 'single'"):
        take_requests([], qa_panel(settings))
