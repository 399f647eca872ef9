"""The UI's table artifacts read as report.html does: columns in words, accuracies in percent,
counts of correct of judged, intervals with their small-sample flags, retrieval means with
three decimals; each row the same cells as report.html's table."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from lme_bench.report.labels import SMALL_SAMPLE
from lme_bench.report.ui_markdown import QA_TABLE_NOTE, judges_words, qa_table, retrieval_table
from tests.html_report_data import JUDGE, write_sample_report


def _sample(tmp_path: Path) -> tuple[dict[str, Any], str]:
    """The sample run's summary and its report.html."""
    summary: dict[str, Any] = {}
    page, _ = write_sample_report(tmp_path, summary.update)
    return summary, page.read_text(encoding="utf-8")


def _html_cells(cells: list[str]) -> str:
    first, *numbers = (escape(c) for c in cells)
    return f"<td>{first}</td>" + "".join(f'<td class="n">{c}</td>' for c in numbers)


def test_qa_scores_are_in_words_and_percent_as_in_report_html(tmp_path: Path) -> None:
    summary, page = _sample(tmp_path)
    rows = qa_table(summary["qa"])
    assert list(rows[0]) == ["judge", "question type", "accuracy", "95% interval"]
    assert {r["judge"] for r in rows} == {JUDGE}
    by_type = {r["question type"]: r for r in rows}
    overall = by_type["overall"]
    assert overall["accuracy"] == "33.3% (1 / 3)"  # 1 right of the 3 judged
    assert overall["95% interval"].endswith(f"({SMALL_SAMPLE}, n = 3)")
    assert "0.3333" not in str(rows)
    assert "task-averaged" in by_type  # its meaning is in the note
    assert "task-averaged: the mean of the per-type accuracies" in QA_TABLE_NOTE
    assert judges_words(summary["qa"]) == (
        f"judge {JUDGE} (1 question without a verdict, left out)"  # the failed question
    )
    for row in rows:  # the same words and figures report.html shows
        shown, counts = row["accuracy"].removesuffix(")").split(" (")
        name = row["question type"]
        if name != "task-averaged":
            assert _html_cells([name, shown, counts]) in page, row
        assert escape(row["95% interval"].split(" (")[0]) in page


def test_retrieval_summary_is_labelled_and_rounded_as_in_report_html(tmp_path: Path) -> None:
    summary, page = _sample(tmp_path)
    rows = retrieval_table(summary, "session")
    assert list(rows[0]) == [
        "question type",
        "questions",
        "top k",
        "recall, any evidence",
        "recall, all evidence",
        "nDCG",
    ]
    overall = {r["top k"]: r for r in rows if r["question type"] == "overall"}
    assert overall["5"]["recall, any evidence"] == "0.333"  # 1 of the 3 non-abstention ones
    assert overall["5"]["questions"] == "3"
    assert [r["top k"] for r in rows] == ["5"] * (len(rows) // 2) + ["10"] * (len(rows) // 2)
    at_5, at_10 = rows[: len(rows) // 2], rows[len(rows) // 2 :]
    for five, ten in zip(at_5, at_10, strict=True):  # report.html's row: the type, @5, @10
        cells = [five["question type"], five["questions"]]
        cells += [five[m] for m in list(five)[3:]] + [ten[m] for m in list(ten)[3:]]
        assert "<tr>" + _html_cells(cells) + "</tr>" in page, (five, ten)


def test_the_qa_artifact_says_a_benchmarks_caveat_from_its_report_hooks() -> None:
    from lme_bench.report.ui_markdown import qa_artifact_words

    locomo = qa_artifact_words({"benchmark": "locomo", "locomo": {"overall_f1": 0.5}})
    assert locomo.startswith("LLM-judge accuracy by question type, not the official LoCoMo")
    assert "(its official figures are in run-summary)" in locomo
    # No section of its own (no F1 was scored): the verdicts are what the table shows.
    assert qa_artifact_words({"benchmark": "locomo"}).startswith("QA accuracy by question type")
    assert qa_artifact_words({"benchmark": "longmemeval"}).startswith("QA accuracy by question")
