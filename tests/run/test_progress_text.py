"""The progress artifact's words: builds ingested counted apart from questions where questions
share builds; a LongMemEval run (each question its own build) as before."""

from __future__ import annotations

from lme_bench.ingest.records import SessionRecord
from lme_bench.report.ingest import totals_markdown
from lme_bench.results.ingest_table import ingest_totals
from lme_bench.run.progress import progress_text


def test_shared_builds_are_counted_apart_from_questions() -> None:
    done = {"ingest": 3, "answer": 120, "judge": 96}
    text = progress_text(1986, 96, 2, 5, builds=10, stage_done=done)
    assert text == (
        "builds ingested 3/10, questions answered 120/1,986, judged 96/1,986, 2 failed"
        " (5 stage results from the cache)"
    )


def test_a_run_whose_builds_are_its_questions_reads_as_before() -> None:
    done = {"ingest": 6, "answer": 6, "judge": 6}
    assert progress_text(6, 6, reused=24, builds=6, stage_done=done) == (
        "6 of 6 questions done (24 stage results from the cache)"
    )
    assert progress_text(5, 2, 1) == "2 of 5 questions done, 1 failed"


def test_ingestion_totals_name_builds_when_questions_share_them() -> None:
    records = [SessionRecord("conv-7:0", f"s{i}", i, "raw", turns=2) for i in range(2)]
    shared = ingest_totals(records, shared_builds=True)
    assert shared["builds"] == 1 and "questions" not in shared
    assert "1 memory build, 2 sessions" in totals_markdown(shared)
    alone = ingest_totals(records)
    assert alone["questions"] == 1 and "builds" not in alone
    assert "1 questions, 2 sessions" in totals_markdown(alone)  # LongMemEval's words, unchanged


def test_stages_running_are_named_before_any_question_is_done() -> None:
    text = progress_text(10, 0, running={"ingest": 2, "answer": 0})
    assert text == "0 of 10 questions done; running: ingest 2"
    assert progress_text(10, 10, running={}) == "10 of 10 questions done"
