"""Retrieval summary: per-question-type and overall means, and the search's latency, as data
(lme_bench.report renders them).

Rows that are not applicable (hits that cannot be mapped to the haystack) are left out of every
average and counted by reason; a granularity where no question could be scored says so
instead of showing figures. The hits that named sessions or turns never stored are counted
(lme_bench.retrieval.stored_names): above a small share the provenance is unverified."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.metrics.ranking_metrics import METRIC_NAMES, mean_metrics
from lme_bench.retrieval.official_ids import GRANULARITIES, RetrievalRow
from lme_bench.retrieval.stored_names import UNSTORED_SHARE_LIMIT, unstored_share, unverified

AVERAGE_NOTE = (
    "Two averages, each question counting once among the questions evaluated: `overall` skips "
    "abstention (`_abs`) questions, as the official metric printer (print_retrieval_metrics.py) "
    "does, and is the headline; `overall, with user-turn evidence` also skips the questions "
    "without evidence in user turns (most single-session-assistant ones, which score "
    "recall_any 0 and recall_all 1), as run_retrieval.py's own averages do. recall_any@k: some "
    "evidence in the top k (the figure most vendors quote); recall_all@k: all evidence in the "
    "top k (the official printer's figure)."
)
OTHER_AVERAGE_NOTE = (  # a LoCoMo, BEAM or plug-in run: no `_abs` ids, no official printer
    "Two averages, each question counting once among the questions evaluated: `overall` skips "
    "the abstention questions (whose answer is not in the history: LoCoMo's adversarial "
    "category, BEAM's abstention ability) and is the headline; `overall, with user-turn "
    "evidence` also skips the questions whose evidence is in no user turn. recall_any@k: some "
    "evidence in the top k; recall_all@k: all evidence in the top k."
)
HEADLINE = "official printer: skip _abs"
WITH_USER_EVIDENCE = "run_retrieval.py: skip _abs and questions without user-turn evidence"


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


def summarize_retrieval(rows: Sequence[RetrievalRow], longmemeval: bool = True) -> dict[str, Any]:
    """The figures per granularity; `longmemeval`: the run's questions are LongMemEval's, whose
    official printer the note names (another benchmark's run gets a note of its own)."""
    summary: dict[str, Any] = {
        "note": AVERAGE_NOTE if longmemeval else OTHER_AVERAGE_NOTE,
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
        names = name_check(mine)
        if names is not None:
            summary[granularity]["names"] = names
    return summary


def name_check(rows: Sequence[RetrievalRow]) -> dict[str, Any] | None:
    """The hits that named a session (turn) by the system's own fields, those naming one never
    stored, and whether that share makes the provenance unverified; None: nothing checked
    (no exact provenance, or tables before schema 6)."""
    checked = [r for r in rows if r.named_hits is not None]
    if not checked:
        return None
    named = sum(r.named_hits or 0 for r in checked)
    unstored = sum(r.unstored_hits or 0 for r in checked)
    return {
        "named_hits": named,
        "unstored_hits": unstored,
        "share": unstored_share(named, unstored),
        "limit": UNSTORED_SHARE_LIMIT,
        "unverified": unverified(named, unstored),
        "questions": sorted({r.question_id for r in checked if r.unstored_hits}),
    }


def _depth(rows: list[RetrievalRow]) -> dict[str, Any]:
    """Hits asked for and returned (fewer returned means a shallower ranking)."""
    asked = [r.requested_depth for r in rows if r.requested_depth is not None]
    got = [r.depth for r in rows if r.depth is not None]
    return {
        "requested": max(asked) if asked else None,
        "returned_min": min(got) if got else None,
        "returned_mean": sum(got) / len(got) if got else None,
    }


def not_applicable(part: dict[str, Any]) -> bool:
    """No question of this granularity could be scored, and some were not applicable."""
    return bool(part.get("not_applicable")) and not part.get("scored", 1)


def _quantile(values: Sequence[float], q: float) -> float:
    """The `q` quantile by linear interpolation between the closest ranks."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def search_latency(rows: Sequence[RetrievalRow]) -> dict[str, Any] | None:
    """p50 / p95 of the memory's search call over the questions searched (one search a
    question, shared by both granularities), the system's own time: waits on lme-bench (its
    embedding lock, a model's first load, limiters) are summed apart; None when no row timed
    it (older tables)."""
    timed = {r.question_id: r for r in rows if r.search_seconds is not None}
    if not timed:
        return None
    values = [r.search_seconds or 0.0 for r in timed.values()]
    waits = [r.search_wait_seconds for r in timed.values() if r.search_wait_seconds is not None]
    return {
        "n": len(values),
        "p50_s": _quantile(values, 0.5),
        "p95_s": _quantile(values, 0.95),
        "max_s": max(values),
        # waits on lme-bench, not in the figures above (tables before schema 7: in them, None)
        "wait_s": sum(waits) if waits else None,
        "waited": sum(w > 0 for w in waits),
        "wait_p95_s": _quantile(waits, 0.95) if waits else None,
        # the memory system's own calls in those searches (tables before schema 5: not counted)
        "embedding_calls": sum(r.search_embedding_calls or 0 for r in timed.values()),
        "model_calls": sum(r.search_model_calls or 0 for r in timed.values()),
    }
