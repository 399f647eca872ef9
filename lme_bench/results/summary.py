"""Retrieval summary: per-question-type and overall means, as data and as Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.metrics.retrieval import METRIC_NAMES, mean_metrics
from lme_bench.retrieval import GRANULARITIES, RetrievalRow

SHOWN_METRICS = (
    "recall_any@5",
    "recall_all@5",
    "ndcg_any@5",
    "recall_any@10",
    "recall_all@10",
    "ndcg_any@10",
)
AVERAGE_NOTE = (
    "Means over non-abstention questions that were evaluated (abstention questions have no "
    "evidence to find and are excluded, as in the official scripts); each question counts once. "
    "recall_any@k: some evidence in the top k (the figure most vendors quote); recall_all@k: all "
    "evidence in the top k (the official printer's figure)."
)


def _group(rows: Sequence[RetrievalRow]) -> dict[str, Any]:
    scored = [r for r in rows if r.status == "ok" and not r.is_abstention]
    group: dict[str, Any] = {"n": len(scored)}
    group.update(mean_metrics([r.metrics for r in scored], METRIC_NAMES))
    return group


def summarize_retrieval(rows: Sequence[RetrievalRow]) -> dict[str, Any]:
    summary: dict[str, Any] = {"note": AVERAGE_NOTE}
    for granularity in GRANULARITIES:
        mine = [r for r in rows if r.granularity == granularity]
        present = [t for t in QUESTION_TYPES if any(r.question_type == t for r in mine)]
        summary[granularity] = {
            "by_type": {t: _group([r for r in mine if r.question_type == t]) for t in present},
            "overall": _group(mine),
            "questions": len(mine),
            "abstention": sum(r.is_abstention for r in mine),
            "errors": sum(r.status != "ok" for r in mine),
        }
    return summary


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def summary_table(summary: dict[str, Any], granularity: str) -> list[dict[str, Any]]:
    """Rows of one granularity: one per question type, then 'overall'."""
    part = summary[granularity]
    groups = [*part["by_type"].items(), ("overall", part["overall"])]
    return [
        {"question_type": name, "n": group["n"], **{m: group.get(m) for m in SHOWN_METRICS}}
        for name, group in groups
    ]


def summary_markdown(summary: dict[str, Any], title: str) -> str:
    lines = [f"# {title}", ""]
    for granularity in GRANULARITIES:
        part = summary[granularity]
        lines += [
            f"## Retrieval, {granularity} granularity",
            "",
            f"{part['questions']} questions ({part['abstention']} abstention, "
            f"{part['errors']} failed).",
            "",
            "| question type | n | " + " | ".join(SHOWN_METRICS) + " |",
            "|---|---:|" + "---:|" * len(SHOWN_METRICS),
        ]
        for row in summary_table(summary, granularity):
            cells = [_cell(row[m]) if row[m] is not None else "-" for m in SHOWN_METRICS]
            lines.append(f"| {row['question_type']} | {row['n']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [summary["note"], ""]
    return "\n".join(lines)
