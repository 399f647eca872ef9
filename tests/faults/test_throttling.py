"""A 30-question run whose every model (memory agent, reader, judge) is a loopback
OpenAI-compatible server answering HTTP 429 to 30% of the calls: the run completes, no question
fails, and every retry is counted in the tables by its cause, each 429 as one throttled retry."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.providers.retry import RETRY_COLUMNS
from tests.faults.runs import RunEnv, assert_same_tables, finish_ok, memories, start_run
from tests.faults.throttling_llm import ThrottlingPolicies
from tests.providers.fake_openai_server import serve

RUN_ID = "throttled"
QUESTIONS = 30
SESSIONS = 316  # of the first 30 sample questions


def _config(folder: Path, base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.toml"
    path.write_text(
        f"""[ingest]
mode = "context-only"

[models]
agent = "llm:note-taker"
qa = "llm:quote-memory"
judge = "llm:match-judge"

[providers.llm]
kind = "openai-compatible"
base_url = "{base_url}"

[limits]
ingest = {QUESTIONS}  # every question at once: backoffs overlap instead of queueing
"""
    )
    return path


@pytest.mark.slow
def test_a_run_with_30_percent_of_calls_throttled_completes_and_counts_retries_by_cause(
    tmp_path: Path, run_env: RunEnv
) -> None:
    throttled, clean = tmp_path / "throttled", tmp_path / "clean"
    policies = ThrottlingPolicies(share=0.3, seed=429, max_in_a_row=1)
    limit = ("--limit", str(QUESTIONS))
    with serve([policies]) as (url, _), serve([ThrottlingPolicies(0.0, 0)]) as (clean_url, _):
        # the same run with no throttling goes alongside, for reference
        reference = start_run(_config(clean, clean_url), clean, RUN_ID, run_env(), *limit)
        finish_ok(start_run(_config(throttled, url), throttled, RUN_ID, run_env(), *limit))
        finish_ok(reference)

    assert 0.2 <= policies.first_attempts_throttled / policies.answered <= 0.4
    run_dir = throttled / RUN_ID
    ingest = pq.read_table(run_dir / "ingest.parquet").to_pylist()
    hypotheses = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    scores = [
        row
        for row in pq.read_table(run_dir / "scores.parquet").to_pylist()
        if row["judge_kind"] == "llm"
    ]
    assert len(ingest) == SESSIONS and all(r["status"] == "ok" for r in ingest)
    assert len(hypotheses) == QUESTIONS and all(r["status"] == "ok" for r in hypotheses)
    assert len(scores) == QUESTIONS and all(r["status"] == "ok" for r in scores)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == [] and manifest["errors"] == {}

    tables = {"ingest": ingest, "hypotheses": hypotheses, "scores": scores}
    by_stage = {name: sum(r["retries_throttled"] for r in rows) for name, rows in tables.items()}
    assert all(by_stage.values()), by_stage  # every stage was throttled and retried
    everything = [*ingest, *hypotheses, *scores]
    retries = {column: sum(r[column] for r in everything) for column in RETRY_COLUMNS}
    # Each 429 the server sent is exactly one throttled retry, however busy the machine.
    assert retries["retries_throttled"] == policies.throttled, retries
    # On a busy machine calls may also time out or fail to connect: those are retried and
    # counted apart, never as throttling; the server sends no 5xx.
    assert retries["retries_server"] == 0
    assert all(r["retries"] == sum(r[c] for c in RETRY_COLUMNS[1:]) for r in everything)
    # Each answered request is one counted call, or one whose reply the client stopped
    # waiting for (a timeout or a dropped connection, retried).
    llm_calls = sum(r["llm_calls"] for r in everything)
    lost = retries["retries_timeout"] + retries["retries_connection"]
    assert llm_calls <= policies.answered <= llm_calls + lost
    summary = json.loads((run_dir / "summary.json").read_text())
    ingestion = summary["ingestion"]
    assert [ingestion[c] for c in RETRY_COLUMNS] == [
        sum(r[c] for r in ingest) for c in RETRY_COLUMNS
    ]
    assert summary["qa"]["answers"]["retries_throttled"] == by_stage["hypotheses"]

    # Apart from the retries, the results and memories are those of the run never throttled.
    assert_same_tables(run_dir, clean / RUN_ID, drop=frozenset(RETRY_COLUMNS))
    found, duplicates = memories(throttled / "memory.sqlite")
    assert found == memories(clean / "memory.sqlite")[0] and duplicates == []
    assert len(found) == QUESTIONS and all(m["contexts"] for m in found.values())
