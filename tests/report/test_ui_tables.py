"""The UI's table artifacts read as report.html does: columns in words, accuracies in percent,
counts of correct of judged, intervals with their small-sample flags, retrieval means with
three decimals; each row the same cells as report.html's table."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from lme_bench.report.labels import SMALL_SAMPLE
from lme_bench.report.ui_markdown import qa_table, retrieval_table
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
    assert list(rows[0]) == [
        "judge",
        "question type",
        "accuracy",
        "correct / judged",
        "95% interval",
        "without a verdict",
    ]
    by_type = {r["question type"]: r for r in rows}
    overall = by_type["overall"]
    assert overall["judge"] == JUDGE
    assert overall["accuracy"] == "33.3%"  # 1 right of the 3 judged
    assert overall["correct / judged"] == "1 / 3"
    assert overall["95% interval"].endswith(f"({SMALL_SAMPLE}, n = 3)")
    assert "0.3333" not in str(rows)
    assert {r["without a verdict"] for r in rows} == {"1"}  # the failed question
    assert "task-averaged (mean of the per-type accuracies)" in by_type
    for row in rows:
        shown = [row["question type"], row["accuracy"], row["correct / judged"]]
        assert _html_cells(shown) in page, row  # the same cells report.html shows
        assert escape(row["95% interval"].split(" (")[0]) in page


def test_retrieval_summary_is_labelled_and_rounded_as_in_report_html(tmp_path: Path) -> None:
    summary, page = _sample(tmp_path)
    rows = retrieval_table(summary, "session")
    assert list(rows[0])[:4] == [
        "question type",
        "questions",
        "recall, any evidence @5",
        "recall, all evidence @5",
    ]
    overall = next(r for r in rows if r["question type"] == "overall")
    assert overall["recall, any evidence @5"] == "0.333"  # 1 of the 3 non-abstention questions
    assert overall["questions"] == "3"
    for row in rows:
        assert "<tr>" + _html_cells(list(row.values())) + "</tr>" in page, row
