"""The figures of a calibration, per question type and overall, from the (reference, candidate)
label pairs (lme_bench.metrics.judge_agreement says how each is computed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lme_bench.metrics.judge_agreement import (
    Table,
    accuracy_difference_of,
    agreement_of,
    bootstrap,
    candidate_accuracy_of,
    kappa_of,
    point,
    reference_accuracy_of,
)

OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class Pair:
    question_id: str
    question_type: str
    reference: bool
    candidate: bool


def _rate(count: int, of: int) -> float | None:
    return count / of if of else None


def group_figures(tables: Mapping[str, Table], resamples: int, seed: int) -> dict[str, Any]:
    """The figures of one group of pairs (`tables`: its pairs' 2x2 table per question type,
    across which the bootstrap stratifies)."""
    table = sum(tables.values(), Table())
    reference_yes = table.both_yes + table.reference_yes_candidate_no
    reference_no = table.both_no + table.reference_no_candidate_yes
    return {
        "n": table.n,
        "table": table.as_dict(),
        "agreement": point(agreement_of, table),
        "kappa": point(kappa_of, table),
        "kappa_ci95": bootstrap(kappa_of, tables, resamples=resamples, seed=seed),
        "reference_yes_candidate_no": {
            "count": table.reference_yes_candidate_no,
            "rate": _rate(table.reference_yes_candidate_no, reference_yes),
        },
        "reference_no_candidate_yes": {
            "count": table.reference_no_candidate_yes,
            "rate": _rate(table.reference_no_candidate_yes, reference_no),
        },
        "reference_accuracy": point(reference_accuracy_of, table),
        "candidate_accuracy": point(candidate_accuracy_of, table),
        "accuracy_difference": point(accuracy_difference_of, table),
        "accuracy_difference_ci95": bootstrap(
            accuracy_difference_of, tables, resamples=resamples, seed=seed
        ),
    }


def type_tables(pairs: Sequence[Pair]) -> dict[str, Table]:
    grouped: dict[str, list[tuple[bool, bool]]] = {}
    for pair in pairs:
        grouped.setdefault(pair.question_type, []).append((pair.reference, pair.candidate))
    return {t: Table.of(v) for t, v in sorted(grouped.items())}


def calibration_figures(
    pairs: Sequence[Pair], *, resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """{"per_type": {type: figures}, "overall": figures}; the overall interval resamples
    within each type."""
    tables = type_tables(pairs)
    return {
        "per_type": {t: group_figures({t: table}, resamples, seed) for t, table in tables.items()},
        OVERALL: group_figures(tables, resamples, seed),
    }
