"""How far a candidate judge's labels are from a reference judge's on the same answers.

A pair is (reference label, candidate label) for one question; a group of pairs is summed into
a 2x2 table. From it: agreement, Cohen's κ, the two kinds of disagreement (reference yes →
candidate no, reference no → candidate yes), each judge's accuracy and their difference.

Intervals: percentile bootstrap over questions, stratified by question type. Resampling the
pairs of a type with replacement is the same as drawing its four cell counts from a
multinomial with the table's shares, which is how resamples are drawn here (numpy's seeded
generator, types in sorted order), so the same tables and seed always give the same interval.
Bounds: the sorted resample values at int(0.025 * (R - 1)) and round(0.975 * (R - 1)), as in
lme_bench.metrics.qa.

The corrected estimate (Rogan-Gladen): with tpr = P(candidate yes | reference yes) and
fpr = P(candidate yes | reference no), an observed candidate accuracy p gives the reference
judge's accuracy (p - fpr) / (tpr - fpr), clipped to [0, 1]; it assumes the candidate errs on a
new run's answers at the rates it erred on the calibration answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy

Interval = tuple[float, float]
Array = numpy.ndarray[Any, Any]
CELLS = ("both_yes", "reference_yes_candidate_no", "reference_no_candidate_yes", "both_no")


@dataclass(frozen=True, slots=True)
class Table:
    """Counts of pairs: both yes, reference yes and candidate no, the reverse, both no."""

    both_yes: int = 0
    reference_yes_candidate_no: int = 0
    reference_no_candidate_yes: int = 0
    both_no: int = 0

    @classmethod
    def of(cls, pairs: Iterable[tuple[bool, bool]]) -> Table:
        cells = [0, 0, 0, 0]
        for reference, candidate in pairs:
            cells[(0 if reference else 2) + (0 if candidate else 1)] += 1
        return cls(*cells)

    @classmethod
    def from_dict(cls, counts: Mapping[str, int]) -> Table:
        return cls(*(int(counts[c]) for c in CELLS))

    def as_dict(self) -> dict[str, int]:
        return dict(zip(CELLS, self.cells, strict=True))

    @property
    def cells(self) -> tuple[int, int, int, int]:
        return (
            self.both_yes,
            self.reference_yes_candidate_no,
            self.reference_no_candidate_yes,
            self.both_no,
        )

    @property
    def n(self) -> int:
        return sum(self.cells)

    def __add__(self, other: Table) -> Table:
        return Table(*(a + b for a, b in zip(self.cells, other.cells, strict=True)))


# The statistics below read arrays of tables, one row per table (a resample), four columns.


def _columns(cells: Array) -> tuple[Array, Array, Array, Array, Array]:
    yy, yn, ny, nn = (cells[:, i].astype(float) for i in range(4))
    return yy, yn, ny, nn, yy + yn + ny + nn


def _divide(top: Array, bottom: Array) -> Array:
    out = numpy.full(top.shape, numpy.nan)
    numpy.divide(top, bottom, out=out, where=bottom > 0)
    return out


def agreement_of(cells: Array) -> Array:
    yy, _, _, nn, n = _columns(cells)
    return _divide(yy + nn, n)


def kappa_of(cells: Array) -> Array:
    """Cohen's κ = (observed - chance agreement) / (1 - chance agreement); NaN where chance
    agreement is 1 (both judges gave one label only)."""
    yy, yn, ny, nn, n = _columns(cells)
    observed = _divide(yy + nn, n)
    reference_yes, candidate_yes = _divide(yy + yn, n), _divide(yy + ny, n)
    chance = reference_yes * candidate_yes + (1 - reference_yes) * (1 - candidate_yes)
    return _divide(observed - chance, 1 - chance)


def reference_accuracy_of(cells: Array) -> Array:
    yy, yn, _, _, n = _columns(cells)
    return _divide(yy + yn, n)


def candidate_accuracy_of(cells: Array) -> Array:
    yy, _, ny, _, n = _columns(cells)
    return _divide(yy + ny, n)


def accuracy_difference_of(cells: Array) -> Array:
    """Candidate accuracy minus reference accuracy."""
    _, yn, ny, _, n = _columns(cells)
    return _divide(ny - yn, n)


def rates_of(cells: Array) -> tuple[Array, Array]:
    """(tpr, fpr): P(candidate yes | reference yes), P(candidate yes | reference no)."""
    yy, yn, ny, nn, _ = _columns(cells)
    return _divide(yy, yy + yn), _divide(ny, ny + nn)


def as_cells(table: Table) -> Array:
    return numpy.array([table.cells])


def point(statistic: Any, table: Table) -> float | None:
    value = float(statistic(as_cells(table))[0])
    return None if numpy.isnan(value) else value


def percentile_interval(values: Array) -> Interval | None:
    kept = numpy.sort(values[~numpy.isnan(values)])
    if not len(kept):
        return None
    return (float(kept[int(0.025 * (len(kept) - 1))]), float(kept[round(0.975 * (len(kept) - 1))]))


def resample_tables(
    tables: Mapping[str, Table], rng: numpy.random.Generator, resamples: int
) -> Array:
    """Resampled pooled tables (resamples x 4): each type's pairs redrawn within the type."""
    total = numpy.zeros((resamples, 4), dtype=numpy.int64)
    for name in sorted(tables):
        table = tables[name]
        if table.n:
            shares = numpy.array(table.cells, dtype=float) / table.n
            total += rng.multinomial(table.n, shares, size=resamples)
    return total


def bootstrap(
    statistic: Any, tables: Mapping[str, Table], *, resamples: int, seed: int
) -> Interval | None:
    """Percentile 95% interval of `statistic` over resamples stratified by type."""
    if resamples < 1 or not any(t.n for t in tables.values()):
        return None
    rng = numpy.random.default_rng(seed)
    return percentile_interval(statistic(resample_tables(tables, rng, resamples)))


def corrected_accuracy(observed: float, tpr: float, fpr: float) -> float | None:
    """(observed - fpr) / (tpr - fpr) clipped to [0, 1]; None when tpr <= fpr (the candidate's
    yes says nothing about the reference's)."""
    if not tpr > fpr:
        return None
    return min(1.0, max(0.0, (observed - fpr) / (tpr - fpr)))


@dataclass(frozen=True, slots=True)
class CorrectedEstimate:
    value: float | None
    ci95: Interval | None
    tpr: float | None
    fpr: float | None
    resamples: int
    dropped: int  # resamples where tpr <= fpr, left out of the interval


def corrected_estimate(
    run_counts: Mapping[str, tuple[int, int]],
    calibration: Mapping[str, Table],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> CorrectedEstimate:
    """The reference judge's accuracy estimated from a run judged by the candidate.

    `run_counts`: per question type, (judged yes, judged) by the candidate in the run;
    `calibration`: per question type, the profile's 2x2 table. Each resample redraws the run's
    labels within each type (binomial) and the calibration pairs within each type (multinomial),
    and recomputes the pooled rates and the estimate."""
    yes = sum(c for c, _ in run_counts.values())
    n = sum(m for _, m in run_counts.values())
    pooled = sum(calibration.values(), Table())
    tpr, fpr = (float(x[0]) for x in rates_of(as_cells(pooled)))
    rates_known = not (numpy.isnan(tpr) or numpy.isnan(fpr))
    value = corrected_accuracy(yes / n, tpr, fpr) if n and rates_known else None
    if value is None or resamples < 1:
        return CorrectedEstimate(
            value, None, tpr if rates_known else None, fpr if rates_known else None, 0, 0
        )
    rng = numpy.random.default_rng(seed)
    observed = numpy.zeros(resamples)
    for name in sorted(run_counts):
        correct, judged = run_counts[name]
        if judged:
            observed += rng.binomial(judged, correct / judged, size=resamples)
    observed /= n
    tprs, fprs = rates_of(resample_tables(calibration, rng, resamples))
    usable = tprs > fprs  # NaN compares False: a resample without one kind of reference label
    estimates = numpy.full(resamples, numpy.nan)
    estimates[usable] = numpy.clip(
        (observed[usable] - fprs[usable]) / (tprs[usable] - fprs[usable]), 0.0, 1.0
    )
    return CorrectedEstimate(
        value,
        percentile_interval(estimates),
        tpr,
        fpr,
        resamples,
        int(resamples - usable.sum()),
    )
