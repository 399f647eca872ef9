"""Why each question scored as it did, set on its score rows when the run is written."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lme_bench.judge.runner import attribute
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow


def attribute_all(
    scores: Sequence[ScoreRow],
    hypotheses: Sequence[HypothesisRow],
    ingested: set[str],
    empty_memories: frozenset[str] = frozenset(),
    has_evidence: Callable[[str], bool] = lambda question_id: False,
) -> None:
    """`has_evidence(question_id)`: the question's haystack holds evidence turns (asked only
    of answers whose evidence in context is unknown)."""
    by_question = {h.question_id: h for h in hypotheses}
    for row in scores:
        if row.status == "ok" and row.score is not None:  # a rubric score (BEAM): no verdict
            row.attribution = "rubric-scored"  # to explain; its answer was given
            continue
        hypothesis = by_question.get(row.question_id)
        unknown = (
            hypothesis is not None
            and hypothesis.evidence_in_context is None
            and not hypothesis.is_abstention
        )
        row.attribution = attribute(
            ingested=row.question_id in ingested,
            answered=hypothesis is not None and hypothesis.status == "ok",
            evidence_in_context=hypothesis.evidence_in_context if hypothesis else None,
            label=row.label,
            readable=row.readable,
            status=row.status,
            memory_empty=row.question_id in empty_memories,
            evidence_unknowable=unknown and row.label is False and has_evidence(row.question_id),
        )
