"""Retrieval summary: per-question-type and overall means, as data and as Markdown.

Rows that are not applicable (hits that cannot be mapped to the haystack) are left out of every
average and counted by reason; a granularity where no question could be scored says so
instead of showing figures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.metrics.ranking_metrics import METRIC_NAMES, mean_metrics
from lme_bench.retrieval.official_ids import GRANULARITIES, RetrievalRow

SHOWN_METRICS = (
    "recall_any@5",
    "recall_all@5",
    "ndcg_any@5",
    "recall_any@10",
    "recall_all@10",
    "ndcg_any@10",
)
AVERAGE_NOTE = (
    "Two averages, each question counting once among the questions evaluated: `overall` skips "
    "abstention (`_abs`) questions, as the official metric printer (print_retrieval_metrics.py) "
    "does, and is the headline; `overall, with user-turn evidence` also skips the questions "
    "without evidence in user turns (most single-session-assistant ones, which score "
    "recall_any 0 and recall_all 1), as run_retrieval.py's own averages do. recall_any@k: some "
    "evidence in the top k (the figure most vendors quote); recall_all@k: all evidence in the "
    "top k (the official printer's figure)."
)
HEADLINE = "official printer: skip _abs"
WITH_USER_EVIDENCE = "run_retrieval.py: skip _abs and questions without user-turn evidence"
WITH_USER_EVIDENCE_ROW = "overall, with user-turn evidence"


def _scored(rows: Sequence[RetrievalRow]) -> list[RetrievalRow]:
    """The headline's questions: evaluated, not abstention (the official printer's rule)."""
    return [r for r in rows if r.status == "ok" and not r.is_abstention]


def _with_user_evidence(rows: Sequence[RetrievalRow]) -> list[RetrievalRow]:
    """run_retrieval.py's rule: also skip questions with no evidence in user turns.

    It skips a question none of whose user turns has `has_answer`; n_evidence counts the user
    turns (sessions) that are evidence, which is 0 exactly then, as long as `has_answer` turns
    sit only in `answer_` sessions, as in the official files.
    """
    return [r for r in _scored(rows) if r.n_evidence > 0]


def _group(scored: Sequence[RetrievalRow]) -> dict[str, Any]:
    group: dict[str, Any] = {"n": len(scored)}
    group.update(mean_metrics([r.metrics for r in scored], METRIC_NAMES))
    return group


def _by_type(rows: Sequence[RetrievalRow], types: Sequence[str]) -> dict[str, Any]:
    return {t: _group([r for r in rows if r.question_type == t]) for t in types}


def summarize_retrieval(rows: Sequence[RetrievalRow]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "note": AVERAGE_NOTE,
        "averaging": {"overall": HEADLINE, "with_user_evidence": WITH_USER_EVIDENCE},
    }
    for granularity in GRANULARITIES:
        mine = [r for r in rows if r.granularity == granularity]
        present = [t for t in QUESTION_TYPES if any(r.question_type == t for r in mine)]
        headline, evidenced = _scored(mine), _with_user_evidence(mine)
        summary[granularity] = {
            "by_type": _by_type(headline, present),
            "overall": _group(headline),
            "with_user_evidence": {
                "by_type": _by_type(evidenced, present),
                "overall": _group(evidenced),
            },
            "questions": len(mine),
            "abstention": sum(r.is_abstention for r in mine),
            "without_user_evidence": len(headline) - len(evidenced),
            "errors": sum(r.status == "error" for r in mine),
            "scored": sum(r.status == "ok" for r in mine),
            "not_applicable": sum(r.status == "not-applicable" for r in mine),
            "not_applicable_reasons": dict(
                Counter(
                    r.reason or "no reason recorded" for r in mine if r.status == "not-applicable"
                )
            ),
            "provenance": sorted({r.provenance for r in mine}),
            "depth": _depth(mine),
        }
    return summary


def _depth(rows: list[RetrievalRow]) -> dict[str, Any]:
    """Hits asked for and returned (fewer returned means a shallower ranking)."""
    asked = [r.requested_depth for r in rows if r.requested_depth is not None]
    got = [r.depth for r in rows if r.depth is not None]
    return {
        "requested": max(asked) if asked else None,
        "returned_min": min(got) if got else None,
        "returned_mean": sum(got) / len(got) if got else None,
    }


PROVENANCE_NOTES = {
    "exact": "hits mapped to the haystack by the system's own fields",
    "attributed": "hits matched to haystack turns by their words (the system rewrites what"
    " it stores); not comparable with exact figures",
    "none": "the system's hits carry no provenance: not applicable, not scored",
}


def not_applicable(part: dict[str, Any]) -> bool:
    """No question of this granularity could be scored, and some were not applicable."""
    return bool(part.get("not_applicable")) and not part.get("scored", 1)


def not_applicable_lines(part: dict[str, Any]) -> list[str]:
    """One line per reason rows were not applicable, with its count of questions."""
    reasons = part.get("not_applicable_reasons") or {}
    return [
        f"Not applicable ({n} question{'s' * (n != 1)}, left out of the averages): {reason}."
        for reason, n in sorted(reasons.items())
    ]


def _provenance_lines(part: dict[str, Any]) -> list[str]:
    """What the figures rest on, when it is not the usual exact mapping."""
    found = part.get("provenance", ["exact"])
    lines = [f"Provenance: {p}: {PROVENANCE_NOTES[p]}." for p in found if p != "exact"]
    lines += not_applicable_lines(part)
    return [*lines, ""] if lines else []


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def summary_table(summary: dict[str, Any], granularity: str) -> list[dict[str, Any]]:
    """Rows of one granularity: one per question type, 'overall' (the official printer's
    average), then 'overall, with user-turn evidence' (run_retrieval.py's)."""
    part = summary[granularity]
    groups = [*part["by_type"].items(), ("overall", part["overall"])]
    if "with_user_evidence" in part:  # summaries written before both averages lack it
        groups.append((WITH_USER_EVIDENCE_ROW, part["with_user_evidence"]["overall"]))
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
            f"{part.get('without_user_evidence', 0)} non-abstention without evidence in user "
            "turns, "
            f"{part['errors']} failed, {part.get('not_applicable', 0)} not applicable).",
            "",
            *_provenance_lines(part),
        ]
        if not_applicable(part):
            lines += ["No figures: retrieval is not applicable to any question (see above).", ""]
            continue
        lines += [
            "| question type | n | " + " | ".join(SHOWN_METRICS) + " |",
            "|---|---:|" + "---:|" * len(SHOWN_METRICS),
        ]
        for row in summary_table(summary, granularity):
            cells = [_cell(row[m]) if row[m] is not None else "-" for m in SHOWN_METRICS]
            lines.append(f"| {row['question_type']} | {row['n']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [summary["note"], ""]
    return "\n".join(lines)
