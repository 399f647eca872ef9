"""The regression gate, as data: each watched figure's paired change from the baseline (run A)
to the run (B), and which of them fell.

A figure fell when its paired 95% interval (lme_bench.compare.paired, as the comparison holds
it) lies wholly below zero and its drop is at least `min_drop` points; an interval with no
spread never counts. A figure the two runs do
not both have (a run not judged, no retrieval table) is listed as not measured, never as fallen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lme_bench.compare.comparison import Comparison
from lme_bench.compare.paired import PairedDelta
from lme_bench.config.regression_section import figure_label


@dataclass(frozen=True, slots=True)
class FigureChange:
    name: str  # qa.overall, retrieval.session.recall_all@5
    label: str  # QA overall, session recall_all@5
    paired: PairedDelta  # values as fractions: delta -0.147 is 14.7 points down
    fell: bool


@dataclass(frozen=True, slots=True)
class GateVerdict:
    baseline: str  # run A's id
    run: str  # run B's id
    min_drop: float  # points
    changes: list[FigureChange]  # the watched figures both runs have
    not_measured: list[str]  # watched figures a run lacks

    @property
    def fallen(self) -> list[FigureChange]:
        return [c for c in self.changes if c.fell]

    @property
    def regressed(self) -> bool:
        return bool(self.fallen)


def _paired(comparison: Comparison, name: str) -> PairedDelta | None:
    if name.startswith("qa."):
        if comparison.qa is None:
            return None
        scores = comparison.qa.scores
        row = {
            "qa.overall": scores.overall,
            "qa.task_averaged": scores.task_averaged,
            "qa.abstention": scores.abstention,
        }[name]
        return row.paired
    _, granularity, metric = name.split(".", 2)
    for part in comparison.retrieval:
        if part.granularity == granularity:
            found = next((m for m in part.official if m.metric == metric), None)
            return found.paired if found is not None else None
    return None


def fell(paired: PairedDelta, min_drop: float) -> bool:
    """The rule: the interval wholly below zero and a drop of at least `min_drop` points. An
    interval with no spread (every resample gave the same change, as with one question per
    type; its ends equal to 0.1 point) says nothing of the uncertainty: it never counts."""
    if paired.delta is None or paired.ci95 is None:
        return False
    low, high = paired.ci95
    if high - low < 0.0005:
        return False
    return high < 0 and -100 * paired.delta >= min_drop - 1e-9


def check_regression(comparison: Comparison, watch: Sequence[str], min_drop: float) -> GateVerdict:
    """The watched figures' changes from A (the baseline) to B, each judged by the rule."""
    changes, missing = [], []
    for name in watch:
        paired = _paired(comparison, name)
        if paired is None or paired.delta is None:
            missing.append(name)
            continue
        changes.append(FigureChange(name, figure_label(name), paired, fell(paired, min_drop)))
    return GateVerdict(comparison.run_a, comparison.run_b, min_drop, changes, missing)
