"""The smoke deployment on a real Prefect server and process worker, started with the CLI:
results and artifacts, a rerun that is all cache hits, and `prefect flow-run retry` redoing
only the question that failed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import (
    KEY_VALUE,
    CompletedRun,
    FakeLlm,
    artifacts,
    deployment_run,
    flow_run_id,
    prompt_text,
    question_task_runs,
    wait_for_attempt,
    write_config,
)

pytestmark = pytest.mark.integration

TABLES = ("retrieval", "ingest", "hypotheses", "scores")
TIMING_COLUMNS = {"seconds", "search_seconds"}
FAILING_ID = "3387bf20"  # the second sample question
FAILING_QUESTION = "What is my current 5K personal best?"


def _table(run_dir: Path, name: str) -> pa.Table:
    return pq.read_table(run_dir / f"{name}.parquet")


def _manifest(run_dir: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text())
    return manifest


def _entries(memory: Path) -> int:
    with sqlite3.connect(memory) as db:
        count: int = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    return count


def _without_timing(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in table.column_names if c in TIMING_COLUMNS])


def test_smoke_deployment_writes_results_and_artifacts(
    prefect: PrefectStack, fake_llm: FakeLlm, completed_run: CompletedRun
) -> None:
    assert completed_run.cli.returncode == 0
    assert "Completed" in completed_run.cli.stdout
    run_dir = completed_run.run_dir
    names = {p.name for p in run_dir.iterdir()}
    assert {f"{t}.parquet" for t in TABLES} | {"manifest.json", "summary.md"} <= names

    retrieval = _table(run_dir, "retrieval").to_pylist()
    assert len({r["question_id"] for r in retrieval}) == 6 and len(retrieval) == 12
    assert {r["status"] for r in retrieval} == {"ok"}
    hypotheses = _table(run_dir, "hypotheses").to_pylist()
    assert [h["hypothesis"] for h in hypotheses] == ["yes"] * 6
    assert {h["qa_model"] for h in hypotheses} == {"fakeai:it-reader"}
    llm_scores = [s for s in _table(run_dir, "scores").to_pylist() if s["judge_kind"] == "llm"]
    assert len(llm_scores) == 6 and {s["status"] for s in llm_scores} == {"ok"}
    assert {s["judge"] for s in llm_scores} == {"fakeai:it-judge"}
    manifest = _manifest(run_dir)
    assert manifest["failed_question_ids"] == []
    assert (manifest["series"], manifest["schedule"]["deployment"]) == ("smoke", "smoke")
    assert manifest["schedule"]["auto_scheduled"] is False  # started by hand

    # one reader call and one judge call per question, each with the key from the worker's env
    assert completed_run.llm_requests == 12
    first = completed_run.first_request
    sent = fake_llm.fake.headers[first : first + completed_run.llm_requests]
    assert {h.get("authorization") for h in sent} == {f"Bearer {KEY_VALUE}"}

    found = artifacts(prefect, completed_run.flow_run)
    assert {"retrieval-summary", "qa-scores", "run-summary", "question-progress"} <= set(found)
    assert found["retrieval-summary"].type == "table"
    retrieval_rows = json.loads(str(found["retrieval-summary"].data))
    assert retrieval_rows and all("question type" in row for row in retrieval_rows)
    qa_rows = json.loads(str(found["qa-scores"].data))
    overall = {r["judge"]: r for r in qa_rows if r["question type"] == "overall"}
    assert overall["fakeai:it-judge"]["accuracy"].endswith(" / 6)")
    assert "judge fakeai:it-judge (0 questions without a verdict" in str(
        found["qa-scores"].description
    )
    summary = found["run-summary"]
    assert summary.type == "markdown"
    for name in ("summary.md", "manifest.json", "retrieval.parquet", "scores.parquet"):
        assert (run_dir / name).resolve().as_uri() in str(summary.data)
    assert found["question-progress"].type == "progress"
    assert float(str(found["question-progress"].data)) == 100.0


def test_rerun_of_the_run_id_is_all_cache_hits(
    prefect: PrefectStack, fake_llm: FakeLlm, completed_run: CompletedRun
) -> None:
    run_dir = completed_run.run_dir
    first = {name: _table(run_dir, name) for name in TABLES}
    memory = completed_run.folder / "memory.sqlite"
    entries = _entries(memory)
    requests = len(fake_llm.fake.requests)

    again = deployment_run(prefect, completed_run.config, "it-1", limit=6)

    assert again.returncode == 0, again.stdout + again.stderr
    assert "Completed" in again.stdout
    second_run = flow_run_id(again.stdout)
    assert second_run != completed_run.flow_run
    assert len(fake_llm.fake.requests) == requests  # not one model call
    # Every stage result was read from the cache by the flow, so no task run was needed.
    assert question_task_runs(prefect, second_run, attempt=1) == []
    progress = artifacts(prefect, second_run)["question-progress"]
    assert progress.description == "6 of 6 questions done (24 stage results from the cache)"
    assert _entries(memory) == entries > 0
    for name, table in first.items():
        assert _without_timing(_table(run_dir, name)).equals(_without_timing(table)), name


def test_flow_run_retry_redoes_only_the_failed_question(
    prefect: PrefectStack, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    config = write_config(tmp_path, fake_llm.base_url)
    run_dir = tmp_path / "results" / "it-retry"
    fake_llm.replies.failing = {FAILING_QUESTION}
    try:
        failed = deployment_run(prefect, config, "it-retry", limit=4)
    finally:
        fake_llm.replies.failing = set()
    assert failed.returncode != 0
    assert "Failed" in failed.stdout
    run = flow_run_id(failed.stdout)
    assert _manifest(run_dir)["failed_question_ids"] == [FAILING_ID]
    hypotheses = {h["question_id"]: h for h in _table(run_dir, "hypotheses").to_pylist()}
    assert hypotheses[FAILING_ID]["status"] == "error"
    assert "400" in hypotheses[FAILING_ID]["error"]

    requests = len(fake_llm.fake.requests)
    retry = prefect.prefect("flow-run", "retry", str(run))
    assert retry.returncode == 0, retry.stdout + retry.stderr
    final = wait_for_attempt(prefect, run, attempt=2, timeout=180)
    assert final.state is not None and final.state.is_completed(), final.state

    redone = fake_llm.fake.requests[requests:]
    assert len(redone) == 2  # the reader and the judge of that one question
    assert all(FAILING_QUESTION in prompt_text(body) for body in redone)
    runs = question_task_runs(prefect, run, attempt=2)  # the rest came from the cache
    assert sorted((t.name.split()[0], t.state_name) for t in runs) == [
        ("answer", "Completed"),
        ("judge", "Completed"),
    ]
    assert all(FAILING_ID in t.name for t in runs)

    manifest = _manifest(run_dir)
    assert manifest["failed_question_ids"] == []
    assert {h["status"] for h in _table(run_dir, "hypotheses").to_pylist()} == {"ok"}
    assert {s["status"] for s in _table(run_dir, "scores").to_pylist()} == {"ok"}
