"""The MCP memory server killed mid-ingestion: the questions it was serving fail with an error
naming the server, the run exits 1 with its results written; with the server started again on
the same SQLite file, `lme-bench rerun` finishes them and no entry is stored twice."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.faults.runs import memories
from tests.faults.server_kill import ENTRIES, QUESTIONS, ServerKilledRun, read_rows

SESSIONS = 316  # of the first 30 sample questions


@pytest.mark.slow
def test_questions_served_by_the_killed_server_fail_with_a_clear_error(
    server_killed_run: ServerKilledRun,
) -> None:
    run = server_killed_run
    assert run.killed_at < ENTRIES
    assert run.first.code == 1, run.first.tail()
    failed = run.first_manifest["failed_question_ids"]
    assert failed and f"lme-bench: {len(failed)} question(s) failed" in run.first.out
    assert f"results written to {run.run_dir}" in run.first.out
    where = f"MCP memory server {run.server.url}"
    errors = run.first_manifest["errors"]
    assert all(where in errors[q] for q in failed), errors
    # every question has its rows; a failed one's retrieval or answer (whichever reached the
    # server once it was gone) is an error naming the server
    assert len(run.first_retrieval) == 2 * QUESTIONS
    assert len(run.first_hypotheses) == QUESTIONS
    not_ok = [r for r in run.first_retrieval + run.first_hypotheses if r["status"] != "ok"]
    assert {r["question_id"] for r in not_ok} == set(failed)
    assert all(where in str(r["error"]) for r in not_ok)


@pytest.mark.slow
def test_rerun_on_the_restarted_server_finishes_them_storing_nothing_twice(
    server_killed_run: ServerKilledRun,
) -> None:
    run = server_killed_run
    assert run.rerun.code == 0, run.rerun.tail()
    manifest = json.loads((run.run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == [] and manifest["errors"] == {}
    assert all(r["status"] == "ok" for r in read_rows(run.run_dir, "retrieval"))
    assert all(r["status"] == "ok" for r in read_rows(run.run_dir, "hypotheses"))
    ingest = read_rows(run.run_dir, "ingest")
    assert len(ingest) == SESSIONS and all(r["status"] == "ok" for r in ingest)

    found, duplicates = memories(run.server.path, run.results)
    assert duplicates == []
    counts = {title: len(m["entries"]) for title, m in found.items()}
    written: Counter[str] = Counter()
    for row in ingest:
        written[row["question_id"]] += row["entries_written"]
    assert counts == dict(written) and sum(counts.values()) == ENTRIES
    assert manifest["memory_entries"] == counts
