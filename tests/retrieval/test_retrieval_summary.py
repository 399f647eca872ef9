"""Both retrieval averages: the official printer's (skip `_abs`) and run_retrieval.py's (also
skip questions without evidence in user turns), labelled, with their question counts."""

from __future__ import annotations

import pytest

from lme_bench.metrics.ranking_metrics import METRIC_NAMES
from lme_bench.report.summary import WITH_USER_EVIDENCE_ROW, summary_markdown, summary_table
from lme_bench.results.summary import summarize_retrieval
from lme_bench.retrieval.official_ids import RetrievalRow, failed_rows


def _row(
    qid: str, qtype: str, value: float, n_evidence: int, abstention: bool = False
) -> list[RetrievalRow]:
    metrics = dict.fromkeys(METRIC_NAMES, value)
    return [
        RetrievalRow(qid, qtype, abstention, g, [], metrics, n_evidence)
        for g in ("session", "turn")
    ]


ROWS = [
    *_row("q1", "single-session-user", 1.0, 2),
    *_row("q2", "single-session-user", 0.0, 1),
    *_row("q3", "single-session-assistant", 0.5, 0),  # evidence only in assistant turns
    *_row("q4_abs", "single-session-user", 1.0, 0, abstention=True),
    *failed_rows("q5", "multi-session", False, "memory server went away"),
]


def test_headline_skips_abstention_and_the_other_average_also_skips_no_user_evidence() -> None:
    summary = summarize_retrieval(ROWS)
    for granularity in ("session", "turn"):
        part = summary[granularity]
        assert part["overall"]["n"] == 3
        assert part["overall"]["recall_all@5"] == pytest.approx(0.5)
        evidenced = part["with_user_evidence"]
        assert evidenced["overall"]["n"] == 2
        assert evidenced["overall"]["recall_all@5"] == pytest.approx(0.5)
        assert evidenced["overall"]["ndcg_any@50"] == pytest.approx(0.5)
        assert evidenced["by_type"]["single-session-assistant"] == {"n": 0}
        assert part["by_type"]["single-session-assistant"]["recall_any@1"] == 0.5
        assert (part["questions"], part["abstention"]) == (5, 1)
        assert (part["without_user_evidence"], part["errors"]) == (1, 1)
    assert "print_retrieval_metrics" in summary["note"] and "run_retrieval" in summary["note"]
    assert set(summary["averaging"]) == {"overall", "with_user_evidence"}


def test_tables_show_both_averages_labelled_with_counts() -> None:
    summary = summarize_retrieval(ROWS)
    table = summary_table(summary, "session")
    assert [(r["question_type"], r["n"]) for r in table[-2:]] == [
        ("overall", 3),
        (WITH_USER_EVIDENCE_ROW, 2),
    ]
    markdown = summary_markdown(summary, "run")
    assert f"| {WITH_USER_EVIDENCE_ROW} | 2 | 0.500 |" in markdown
    assert "1 non-abstention without evidence in user turns" in markdown


def test_a_summary_without_the_second_average_still_renders() -> None:
    summary = summarize_retrieval(ROWS)
    del summary["turn"]["with_user_evidence"]
    assert summary_table(summary, "turn")[-1]["question_type"] == "overall"
