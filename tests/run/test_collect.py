"""What follows what per question, and how failures become rows (no Prefect involved)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from lme_bench.config.settings import load_settings
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.qa.stage import unanswered_row
from lme_bench.run.collect import Done, IngestJob, Job, RunCollector
from lme_bench.run.steps import StageFailed
from tests.factories import make_question


def _setup(tmp_path: Path) -> tuple[RunCollector, list[Job]]:
    data = tmp_path / "data.json"
    data.write_text(json.dumps([make_question("q1"), make_question("q2")]))
    refs = prepare_dataset(data, tmp_path / "cache").questions
    settings = load_settings(None, **{"models.qa": "fake:echo", "models.judge": "fake:yes"})
    collector = RunCollector(refs, settings)
    locations = {
        r.question_id: MemoryLocation(r.question_id, f"m-{r.question_id}", 0) for r in refs
    }
    return collector, collector.start(locations)


def test_a_question_moves_through_every_stage(tmp_path: Path) -> None:
    collector, jobs = _setup(tmp_path)
    assert [j.stage for j in jobs] == ["ingest", "ingest"]
    outcome = IngestOutcome("q1", "m-q1", 3, 0.1)
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
    answer = collector.finished(Done(jobs[0], IngestOutcome("q1", "m", 3, 0.1), None))[1]
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
        locations = {r.question_id: MemoryLocation(r.question_id, "m", 0) for r in refs}
        jobs = collector.start(locations)
        assert [refs[j.index].question_id for j in jobs] == ["long", "short"], mode


def _shared_build(tmp_path: Path) -> tuple[RunCollector, list[Job]]:
    """Three questions, the first and last asking one build (as a LoCoMo conversation's do)."""
    data = tmp_path / "data.json"
    data.write_text(json.dumps([make_question(q) for q in ("q1", "q2", "q3")]))
    refs = prepare_dataset(data, tmp_path / "cache").questions
    build_of = {"q1": "conv-1", "q2": "conv-2", "q3": "conv-1"}
    refs = [replace(r, build_id=build_of[r.question_id]) for r in refs]
    settings = load_settings(None, **{"models.qa": "fake:echo", "models.judge": "fake:yes"})
    collector = RunCollector(refs, settings)
    locations = {b: MemoryLocation(b, f"m-{b}", 0) for b in ("conv-1", "conv-2")}
    return collector, collector.start(locations)


def test_a_build_is_ingested_once_for_every_question_asking_it(tmp_path: Path) -> None:
    collector, jobs = _shared_build(tmp_path)
    assert collector.builds == 2
    ingested = {collector.refs[j.index].build: j for j in jobs if isinstance(j, IngestJob)}
    assert len(jobs) == 2 and set(ingested) == {"conv-1", "conv-2"}
    assert ingested["conv-1"].location.memory_id == "m-conv-1"
    outcome = IngestOutcome("q1", "m-conv-1", 3, 0.1, ingestion_id="ing-1")
    follow = collector.finished(Done(ingested["conv-1"], outcome, None))
    asked = sorted({collector.refs[j.index].question_id for j in follow})
    assert asked == ["q1", "q3"]  # both questions of the build, from its one ingestion
    assert all(j.upstream is outcome for j in follow)
    assert collector.ingestion_id(2) == "ing-1" and collector.ingestion_id(1) == ""
    for job in follow:
        collector.finished(Done(job, [] if job.stage == "retrieval" else None, "x"))
    assert collector.questions_done == 2
    assert len(collector.results().outcomes) == 1  # one ingestion, not one per question


def test_a_failed_build_fails_every_question_asking_it(tmp_path: Path) -> None:
    collector, jobs = _shared_build(tmp_path)
    [conv_1] = [j for j in jobs if collector.refs[j.index].build == "conv-1"]
    assert collector.finished(Done(conv_1, None, ValueError("store rejected it"))) == []
    assert sorted(collector.failed) == ["q1", "q3"]
    assert collector.questions_done == 2
    hypotheses = collector.results().hypotheses or []
    assert sorted(h.question_id for h in hypotheses) == ["q1", "q3"]


def test_every_job_that_follows_is_of_a_stage_the_stage_table_puts_after_the_one_done(
    tmp_path: Path,
) -> None:
    from lme_bench.run.stage_table import STAGES

    collector, pending = _setup(tmp_path)
    values = {
        "ingest": IngestOutcome("q1", "m-q1", 3, 0.1),
        "retrieval": [],
        "answer": unanswered_row(collector.refs[0], collector.settings),
        "judge": [],
    }
    followed: set[tuple[str, str]] = set()
    while pending:
        job = pending.pop()
        follow = collector.finished(Done(job, values[job.stage], None))
        followed |= {(job.stage, j.stage) for j in follow}
        pending += follow
    assert followed == {
        (spec.upstream, spec.name) for spec in STAGES.values() if spec.upstream is not None
    }
