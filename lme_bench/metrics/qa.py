"""QA accuracy as LongMemEval reports it, with bootstrap 95% intervals.

- per-type accuracy: mean label over the judged questions of each type (`_abs` questions count
  inside their base type), with counts;
- task-averaged accuracy: the plain mean of the per-type accuracies (types present);
- overall accuracy: the mean over all judged questions;
- abstention accuracy: the mean over abstention questions (`_abs` ids, or those the gold flags:
  LoCoMo's adversarial ones).
A label is the official one (a judge reply without "yes" is wrong); questions without a label
(a judge call that failed, an answer that failed, a question the fallback cannot grade) are
counted apart and left out of every mean.
Intervals: percentile bootstrap over questions (resampled within each type, so every type keeps
its count), seeded, so the same labels always give the same interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy

from lme_bench.dataset.models import is_abstention_id

Interval = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Judged:
    question_id: str
    question_type: str
    label: bool | None  # None: no verdict
    abstains: bool | None = None  # the gold's abstention flag; None: LongMemEval's `_abs` id rule

    @property
    def is_abstention(self) -> bool:
        return is_abstention_id(self.question_id) if self.abstains is None else self.abstains


@dataclass(frozen=True, slots=True)
class Accuracy:
    value: float | None
    correct: int
    n: int
    ci95: Interval | None = None


Counts = dict[str, tuple["numpy.ndarray[Any, Any]", int]]
"""Per question type with labels: how many are yes (one count per resample) and how many."""


def _mean(labels: Sequence[bool]) -> float | None:
    return sum(labels) / len(labels) if labels else None


def _by_type(rows: Sequence[Judged]) -> dict[str, list[bool]]:
    groups: dict[str, list[bool]] = {}
    for row in rows:
        if row.label is not None:
            groups.setdefault(row.question_type, []).append(row.label)
    return groups


def task_averaged_of(counts: Counts) -> numpy.ndarray[Any, Any]:
    """The mean of the per-type accuracies, summed in type order as plain floats would be."""
    return cast("numpy.ndarray[Any, Any]", sum(yes / n for yes, n in counts.values())) / len(counts)


def overall_of(counts: Counts) -> numpy.ndarray[Any, Any]:
    """The accuracy over every label."""
    yes = sum(yes for yes, _ in counts.values())
    return cast("numpy.ndarray[Any, Any]", yes) / sum(n for _, n in counts.values())


Statistic = Callable[[Counts], "numpy.ndarray[Any, Any]"]


def _point(groups: dict[str, list[bool]], statistic: Statistic) -> float | None:
    counts = {t: (numpy.array([sum(v)]), len(v)) for t, v in groups.items() if v}
    return float(statistic(counts)[0]) if counts else None


def bootstrap_interval(
    groups: dict[str, list[bool]],
    statistic: Statistic,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval | None:
    """Percentile 95% interval of `statistic` over stratified resamples of the labels.

    A resample of n yes/no labels is fixed by how many are yes, which is binomial(n, share of
    yes): drawn at once for every resample, instead of drawing n labels one by one; the
    statistic then reads every resample's counts at once (integer counts divided as Python
    divides them, so each value is the float that averaging the labels gives)."""
    if not any(groups.values()):
        return None
    rng = numpy.random.default_rng(seed)
    counts = {
        t: (rng.binomial(len(v), sum(v) / len(v), size=resamples), len(v))
        for t, v in groups.items()
        if v
    }
    values = numpy.sort(statistic(counts))
    low = values[int(0.025 * (len(values) - 1))]
    high = values[round(0.975 * (len(values) - 1))]
    return (float(low), float(high))


def _accuracy(labels: list[bool], resamples: int, seed: int) -> Accuracy:
    ci = bootstrap_interval({"all": labels}, overall_of, resamples=resamples, seed=seed)
    return Accuracy(_mean(labels), sum(labels), len(labels), ci)


@dataclass(frozen=True, slots=True)
class QaScores:
    per_type: dict[str, Accuracy]
    task_averaged: Accuracy
    overall: Accuracy
    abstention: Accuracy
    not_judged: int


def score_qa(rows: Sequence[Judged], *, resamples: int = 2000, seed: int = 0) -> QaScores:
    groups = _by_type(rows)
    judged = [label for labels in groups.values() for label in labels]
    abstention = [r.label for r in rows if r.is_abstention and r.label is not None]
    return QaScores(
        per_type={t: _accuracy(v, resamples, seed) for t, v in sorted(groups.items())},
        task_averaged=Accuracy(
            _point(groups, task_averaged_of),
            sum(judged),
            len(judged),
            bootstrap_interval(groups, task_averaged_of, resamples=resamples, seed=seed),
        ),
        overall=Accuracy(
            _point(groups, overall_of),
            sum(judged),
            len(judged),
            bootstrap_interval(groups, overall_of, resamples=resamples, seed=seed),
        ),
        abstention=_accuracy(abstention, resamples, seed),
        not_judged=sum(r.label is None for r in rows),
    )
