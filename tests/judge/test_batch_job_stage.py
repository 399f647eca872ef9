"""The judge stage through OpenAI's Batch API, against a loopback server speaking it: the rows
are those of the call-by-call stage (timing aside), failed and expired items are judged call by
call, a restarted stage finds its job in the run folder instead of paying for a new one, and
custom ids name nothing."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge.batch_job_stage import (
    JudgeItem,
    collect_scores,
    judge_in_batch_jobs,
    plan_calls,
    refresh_jobs,
    start_jobs,
)
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.stage import judge_question
from lme_bench.providers.batch_jobs.openai_jobs import OpenAIBatchJobApi
from lme_bench.providers.batch_jobs.protocol import BatchRequest
from lme_bench.results.batch_jobs import answered_in_batch_jobs, manifest_entries, read_jobs
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.run.steps import plan_run, prepare_questions
from tests.providers.fake_batch_server import FakeBatchJobApi, multipart_fields, serve_batches

TIMING = {"seconds"}


def _settings(tmp_path: Path, base_url: str, **extra: Any) -> Settings:
    config = tmp_path / "batch.toml"
    config.write_text(
        '[models]\njudge = "lab:gpt-4o-2024-08-06"\n'
        f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{base_url}"\n'
        "[judge]\nbatch = true\nbatch_poll_s = 0.01\nrepeats = 2\n"
    )
    overrides = {"run.results_dir": str(tmp_path / "results"), "run.id": "batch"} | extra
    return load_settings(config, **overrides)


def _items(settings: Settings, limit: int = 6) -> list[JudgeItem]:
    _, refs = prepare_questions(plan_run(settings), limit=limit)
    return [JudgeItem(ref, _hypothesis(ref, n)) for n, ref in enumerate(refs)]


def _hypothesis(ref: QuestionRef, n: int) -> Any:
    from lme_bench.qa.stage import unanswered_row

    answer = ref.load().answer if n % 2 else "I do not know"
    return replace(
        unanswered_row(ref, load_settings(Path("configs/default.toml"))), hypothesis=answer
    )


def _call_by_call(items: list[JudgeItem], settings: Settings) -> dict[str, list[ScoreRow]]:
    return {
        i.ref.question_id: asyncio.run(judge_question(i.ref, i.hypothesis, judge_panel(settings)))
        for i in items
    }


def _comparable(rows: dict[str, list[ScoreRow]]) -> dict[str, list[dict[str, Any]]]:
    return {
        q: [{k: v for k, v in asdict(r).items() if k not in TIMING} for r in found]
        for q, found in rows.items()
    }


def test_rows_equal_the_call_by_call_rows(tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings)
        batched = judge_in_batch_jobs(
            items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        assert not fake.chat_requests  # every verdict came from the job
        live = _call_by_call(items, settings)
        assert len(fake.chat_requests) == 12  # 6 questions x 2 repeats
        sent = [json.loads(x) for x in fake.files["file-1"][2].splitlines()]
    assert _comparable(batched) == _comparable(live)
    assert {r.label for rows in batched.values() for r in rows if r.judge_kind == "llm"} == {
        True,
        False,
    }
    # the bodies are what the call-by-call path sent, in the same order
    assert [line["body"] for line in sent] == fake.chat_requests
    assert {line["url"] for line in sent} == {"/v1/chat/completions"}
    (job,) = read_jobs(tmp_path / "run")
    assert (job.state, job.provider_status, len(job.answered), job.redone) == (
        "completed",
        "completed",
        12,
        [],
    )
    assert job.counts == {"total": 12, "completed": 12, "failed": 0}
    (entry,) = manifest_entries(tmp_path / "run")
    assert (entry["job_id"], entry["price_factor"], entry["requests"]) == (job.job_id, 0.5, 12)
    assert len(answered_in_batch_jobs([job])) == 12


def test_statuses_progress_over_polls_on_kept_alive_connections(tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings, limit=2)
        jobs = start_jobs(items, judge_panel(settings), tmp_path / "run")
        seen = []
        while not refresh_jobs(jobs, judge_panel(settings), tmp_path / "run"):
            seen.append(read_jobs(tmp_path / "run")[0].provider_status)
        collect_scores(items, jobs, judge_panel(settings), tmp_path / "run")
        requests = list(fake.requests)
        connections = fake.connections
    assert seen == ["in_progress", "finalizing"]
    assert requests[:2] == [("POST", "/v1/files"), ("POST", "/v1/batches")]
    assert requests[-1][1].endswith("/content")
    assert connections < len(requests)  # connections were kept alive between requests


def test_failed_and_expired_items_are_judged_call_by_call(tmp_path: Path) -> None:
    with serve_batches(FakeBatchJobApi(failing={1, 4}, expire_after=9)) as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings)
        batched = judge_in_batch_jobs(
            items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        redone = len(fake.chat_requests)
        live = _call_by_call(items, settings)
    assert redone == 2 + 3  # two failed, three left when the window closed
    assert _comparable(batched) == _comparable(live)
    (job,) = read_jobs(tmp_path / "run")
    assert (job.state, len(job.answered), len(job.redone)) == ("expired", 7, 5)
    assert all(r.status == "ok" for rows in batched.values() for r in rows)


def test_a_failed_job_is_judged_call_by_call(tmp_path: Path) -> None:
    with serve_batches(FakeBatchJobApi(reject=True)) as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings, limit=2)
        batched = judge_in_batch_jobs(
            items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        redone = len(fake.chat_requests)
        live = _call_by_call(items, settings)
    assert redone == 4
    assert _comparable(batched) == _comparable(live)
    (job,) = read_jobs(tmp_path / "run")
    assert (job.state, job.answered, len(job.redone)) == ("failed", [], 4)


def test_a_restarted_stage_waits_for_the_job_it_submitted(tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        settings = _settings(tmp_path, base_url)
        items = _items(settings, limit=3)
        first = start_jobs(items, judge_panel(settings), tmp_path / "run")
        refresh_jobs(first, judge_panel(settings), tmp_path / "run")  # then the process is gone
        again = start_jobs(items, judge_panel(settings), tmp_path / "run")
        assert [j.job_id for j in again] == [j.job_id for j in first]
        assert again[0].provider_status == "in_progress"  # read back from the run folder
        judge_in_batch_jobs(items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None)
        assert len(fake.batches) == 1 and not fake.chat_requests
        # other answers are other requests: a job of their own
        other = [replace(i, hypothesis=replace(i.hypothesis, hypothesis="blue")) for i in items]
        start_jobs(other, judge_panel(settings), tmp_path / "run")
        assert len(fake.batches) == 2
    assert len(read_jobs(tmp_path / "run")) == 2


def test_custom_ids_name_no_question_or_label(tmp_path: Path) -> None:
    with serve_batches() as (base_url, _):
        settings = _settings(tmp_path, base_url)
        items = _items(settings)
    calls = plan_calls(items, judge_panel(settings))
    assert len({c.custom_id for c in calls}) == len(calls) == 12
    for call in calls:
        for item in items:
            assert item.ref.question_id not in call.custom_id
        assert len(call.custom_id) == 32 and call.custom_id.isalnum()


def test_a_judge_without_a_batch_api_is_refused(tmp_path: Path) -> None:
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path), "judge.batch": True},
    )
    with pytest.raises(ConfigError, match=r"fake:match-judge.*no batch API"):
        plan_run(settings)  # before any work


def test_the_client_uploads_one_multipart_jsonl_file(tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        api = OpenAIBatchJobApi("key", base_url, 10.0)
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
        job_id = api.submit([BatchRequest("a1", body), BatchRequest("b2", body)], "test")
        name, purpose, content = fake.files["file-1"]
        batch = fake.batches[job_id]
        while not api.status(job_id).final:
            pass
        results = api.results(job_id)
        api.close()
    assert (name, purpose) == ("requests.jsonl", "batch")
    assert (batch.endpoint, batch.completion_window) == ("/v1/chat/completions", "24h")
    assert [json.loads(x)["custom_id"] for x in content.splitlines()] == ["a1", "b2"]
    assert sorted(results) == ["a1", "b2"] and results["a1"].reply is not None


def test_multipart_fields_reads_a_form() -> None:
    data = (
        b'--XX\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
        b'--XX\r\nContent-Disposition: form-data; name="file"; filename="r.jsonl"\r\n'
        b'Content-Type: application/jsonl\r\n\r\n{"a": 1}\n\r\n--XX--\r\n'
    )
    fields = multipart_fields("multipart/form-data; boundary=XX", data)
    assert fields["purpose"] == (None, b"batch")
    assert fields["file"] == ("r.jsonl", b'{"a": 1}\n')
