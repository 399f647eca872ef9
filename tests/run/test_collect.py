"""What follows what per question, and how failures become rows (no Prefect involved)."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.config.settings import load_settings
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.qa.stage import unanswered_row
from lme_bench.run.collect import Done, Job, RunCollector
from lme_bench.run.steps import StageFailed
from tests.factories import make_question


def _setup(tmp_path: Path) -> tuple[RunCollector, list[Job]]:
    data = tmp_path / "data.json"
    data.write_text(json.dumps([make_question("q1"), make_question("q2")]))
    refs = prepare_dataset(data, tmp_path / "cache").questions
    settings = load_settings(None, **{"models.qa": "fake:echo", "models.judge": "fake:yes"})
    collector = RunCollector(refs, settings)
    locations = {
        r.question_id: MemoryLocation(r.question_id, "v", f"m-{r.question_id}", 0) for r in refs
    }
    return collector, collector.start(locations)


def test_a_question_moves_through_every_stage(tmp_path: Path) -> None:
    collector, jobs = _setup(tmp_path)
    assert [j.stage for j in jobs] == ["ingest", "ingest"]
    outcome = IngestOutcome("q1", "v", "m-q1", 3, 0.1)
    follow = collector.finished(Done(jobs[0], outcome, None))
    assert [j.stage for j in follow] == ["retrieval", "answer"]
    assert all(j.upstream is outcome for j in follow)
    hypothesis = unanswered_row(collector.refs[0], collector.settings)
    judge = collector.finished(Done(follow[1], hypothesis, None))
    assert [(j.stage, j.upstream) for j in judge] == [("judge", hypothesis)]
    collector.finished(Done(follow[0], [], None))
    assert collector.questions_done == 0  # its judge is still to come
    collector.finished(Done(judge[0], [], None))
    assert collector.questions_done == 1 and not collector.failed


def test_a_failed_ingestion_leaves_error_rows_and_stops_the_question(tmp_path: Path) -> None:
    collector, jobs = _setup(tmp_path)
    assert collector.finished(Done(jobs[1], None, ValueError("store rejected it"))) == []
    results = collector.results()
    assert collector.questions_done == 1
    assert results.failed == {"q2": "ValueError: store rejected it"}
    assert {r.status for r in results.retrieval or []} == {"error"}
    [row] = results.hypotheses or []
    assert row.question_id == "q2" and row.status == "error"
    assert row.error == "not answered: ingestion failed: ValueError: store rejected it"


def test_failure_rows_are_kept_but_the_question_counts_as_failed(tmp_path: Path) -> None:
    collector, jobs = _setup(tmp_path)
    answer = collector.finished(Done(jobs[0], IngestOutcome("q1", "v", "m", 3, 0.1), None))[1]
    failed = unanswered_row(collector.refs[0], collector.settings, "RateLimitError: quota")
    assert collector.finished(Done(answer, None, StageFailed(failed))) == []  # no judging
    assert collector.results().hypotheses == [failed]
    assert collector.failed["q1"] == "StageFailed: RateLimitError: quota"


def test_the_longest_ingestion_is_started_first(tmp_path: Path) -> None:
    short = make_question("short")
    long = make_question("long")
    for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
        long[key] = long[key] * 2
    long["haystack_session_ids"] = [f"s{i}" for i in range(4)]
    data = tmp_path / "data.json"
    data.write_text(json.dumps([short, long]))
    refs = prepare_dataset(data, tmp_path / "cache").questions
    for mode in ("raw", "context-only"):  # turns decide the one, sessions the other
        settings = load_settings(None, **{"ingest.mode": mode})
        collector = RunCollector(refs, settings)
        locations = {r.question_id: MemoryLocation(r.question_id, "v", "m", 0) for r in refs}
        jobs = collector.start(locations)
        assert [refs[j.index].question_id for j in jobs] == ["long", "short"], mode
