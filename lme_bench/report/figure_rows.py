"""The rows of the per-type tables as report.html shows them (words for names, percent, counts,
intervals), in plain text: report.html escapes and marks them up, the UI's table artifacts
take them as they are (lme_bench/report/ui_markdown.py)."""

from __future__ import annotations

from typing import Any

from lme_bench.report.labels import count, label, metric_label, percent
from lme_bench.report.summary import SHOWN_METRICS, summary_table

ACCURACY_HEADER = ("question type", "accuracy", "correct / judged", "95% interval")
RETRIEVAL_HEADER = ("question type", "questions", *(metric_label(m) for m in SHOWN_METRICS))


def accuracy_groups(judge: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, accuracy) per question type, then task-averaged, overall and abstention."""
    return [
        *judge["per_type"].items(),
        ("task-averaged", judge["task_averaged"]),
        ("overall", judge["overall"]),
        ("abstention", judge["abstention"]),
    ]


def accuracy_cells(name: str, accuracy: dict[str, Any]) -> list[str]:
    """The row's name in words, its accuracy and its count of correct of judged (the interval
    is left to the caller: report.html marks its flag up)."""
    counts = f"{count(accuracy['correct'])} / {count(accuracy['n'])}"
    return [label(name), percent(accuracy["accuracy"]), counts]


def metric_cell(value: float | None) -> str:
    """A retrieval mean (0-1) with three decimals, as the official printer shows it."""
    return "-" if value is None else f"{value:.3f}"


def retrieval_rows(summary: dict[str, Any], granularity: str) -> list[list[str]]:
    """One granularity's rows under RETRIEVAL_HEADER."""
    return [
        [str(row["question_type"]), count(row["n"])] + [metric_cell(row[m]) for m in SHOWN_METRICS]
        for row in summary_table(summary, granularity)
    ]
