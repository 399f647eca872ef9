"""The BEAM section's counts: failed and missing judgings, undefined (NaN) scores, no judge."""

from __future__ import annotations

import math
from pathlib import Path

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.beam.report import NO_JUDGE, beam_report
from lme_bench.dataset.shards import QuestionRef, prepare_dataset
from lme_bench.report.qa import qa_markdown
from lme_bench.results.qa_scores import qa_summary
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.summary import summarize_retrieval
from lme_bench.retrieval.official_ids import RetrievalRow
from tests.benchmarks.beam.samples import write_chat, write_questions


def _refs(tmp_path: Path) -> list[QuestionRef]:
    write_chat(tmp_path)
    write_questions(tmp_path)
    split, kind = splitter_for(None, tmp_path / "chats")
    return prepare_dataset(tmp_path / "chats", tmp_path / "cache", split, kind).questions


def _row(ref: QuestionRef, score: float | None, status: str = "ok") -> ScoreRow:
    return ScoreRow(
        ref.question_id, ref.question_type, False, "j", "llm", 0, "beam-official", "p", "",
        None, True, '{"unreadable_items": 1}', status, "", score=score,
    )  # fmt: skip


def test_failed_and_missing_judgings_are_counted_and_left_out_of_the_means(
    tmp_path: Path,
) -> None:
    refs = _refs(tmp_path)
    extraction = [r for r in refs if r.question_type == "information_extraction"]
    ordering = next(r for r in refs if r.question_type == "event_ordering")
    abstention = next(r for r in refs if r.question_type == "abstention")
    rows = [
        _row(extraction[0], 1.0),
        _row(extraction[1], None, "error"),
        _row(ordering, math.nan),
        _row(abstention, 0.5),
    ]
    figures, markdown = beam_report(tmp_path, refs, [], rows, ["j"])
    judged = figures["judges"]["j"]
    assert (judged["judged"], judged["failed"], judged["not_judged"]) == (3, 1, 1)
    assert judged["undefined_scores"] == 1 and judged["unreadable_items"] == 3
    abilities = judged["abilities"]
    assert abilities["information_extraction"] == {"questions": 2, "judged": 1, "score": 1.0}
    assert abilities["event_ordering"]["score"] is None  # NaN, as the official mean gives
    assert abilities["instruction_following"] == {"questions": 1, "judged": 0, "score": None}
    assert judged["mean_over_abilities"] is None
    assert figures["exports"] == []  # no answers to export
    assert "1 judgings failed, 1 not judged" in markdown


def test_without_an_llm_judge_there_is_no_beam_score(tmp_path: Path) -> None:
    figures, markdown = beam_report(tmp_path, _refs(tmp_path), [], [], [])
    assert figures["judge"] is None and figures["judges"] == {} and figures["note"] == NO_JUDGE
    assert NO_JUDGE in markdown


def test_a_rubric_scored_row_is_attributed_as_such() -> None:
    from lme_bench.results.qa_tables import HypothesisRow
    from lme_bench.run.attribution import attribute_all

    ref = QuestionRef(0, "100K-1:q1", "abstention", True, "ab" * 32, 1, 2, "q.json")
    scored, failed = _row(ref, 0.5), _row(ref, None, "error")
    answer = HypothesisRow(ref.question_id, "abstention", True, "x", "single", "q", "v", 5, 0)
    attribute_all([scored, failed], [answer], {ref.question_id})
    assert (scored.attribution, failed.attribution) == ("rubric-scored", "judge-failed")


def test_a_beam_summary_has_no_longmemeval_notes(tmp_path: Path) -> None:
    """BEAM questions get rubric scores, no yes/no verdicts: the QA part has no accuracy table,
    so neither the notes that explain one (LongMemEval's official printer, `_abs` ids), and the
    retrieval note names no LongMemEval script."""
    refs = _refs(tmp_path)
    types = {r.question_id: r.question_type for r in refs}
    answers = [
        HypothesisRow(r.question_id, r.question_type, False, "an answer", "single", "q", "v1", 5, 0)
        for r in refs
    ]
    markdown = qa_markdown(qa_summary([], answers, types), "beam")
    assert f"{len(refs)} of {len(refs)} questions answered (0 failed)" in markdown
    for note in ("six types", "_abs", "evaluate_qa.py", "print_qa_metrics.py"):
        assert note not in markdown
    rows = [RetrievalRow(r.question_id, r.question_type, r.is_abstention, "turn", []) for r in refs]
    note = summarize_retrieval(rows, longmemeval=False)["note"]
    assert "_abs" not in note and "print_retrieval_metrics.py" not in note
    assert "BEAM's abstention ability" in note
