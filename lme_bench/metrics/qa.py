"""QA accuracy as LongMemEval reports it, with bootstrap 95% intervals.

- per-type accuracy: mean label over the judged questions of each type (`_abs` questions count
  inside their base type), with counts;
- task-averaged accuracy: the plain mean of the per-type accuracies (types present);
- overall accuracy: the mean over all judged questions;
- abstention accuracy: the mean over `_abs` questions.
A label is the official one (a judge reply without "yes" is wrong); questions without a label
(a judge call that failed, an answer that failed, a question the fallback cannot grade) are
counted apart and left out of every mean.
Intervals: percentile bootstrap over questions (resampled within each type, so every type keeps
its count), seeded, so the same labels always give the same interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy

from lme_bench.dataset.models import is_abstention_id

Interval = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Judged:
    question_id: str
    question_type: str
    label: bool | None  # None: no verdict

    @property
    def is_abstention(self) -> bool:
        return is_abstention_id(self.question_id)


@dataclass(frozen=True, slots=True)
class Accuracy:
    value: float | None
    correct: int
    n: int
    ci95: Interval | None = None


def _mean(labels: Sequence[bool]) -> float | None:
    return sum(labels) / len(labels) if labels else None


def _by_type(rows: Sequence[Judged]) -> dict[str, list[bool]]:
    groups: dict[str, list[bool]] = {}
    for row in rows:
        if row.label is not None:
            groups.setdefault(row.question_type, []).append(row.label)
    return groups


def task_averaged(groups: dict[str, list[bool]]) -> float | None:
    means = [m for m in (_mean(v) for v in groups.values()) if m is not None]
    return sum(means) / len(means) if means else None


def _overall(groups: dict[str, list[bool]]) -> float | None:
    return _mean([label for labels in groups.values() for label in labels])


def bootstrap_interval(
    groups: dict[str, list[bool]],
    statistic: Callable[[dict[str, list[bool]]], float | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval | None:
    """Percentile 95% interval of `statistic` over stratified resamples of the labels.

    A resample of n yes/no labels is fixed by how many are yes, which is binomial(n, share of
    yes): drawn at once for every resample, instead of drawing n labels one by one."""
    if not any(groups.values()):
        return None
    rng = numpy.random.default_rng(seed)
    drawn = {
        t: rng.binomial(len(v), sum(v) / len(v), size=resamples).tolist()
        for t, v in groups.items()
        if v
    }
    sizes = {t: len(groups[t]) for t in drawn}
    values = []
    for i in range(resamples):
        sample = {t: [True] * yes[i] + [False] * (sizes[t] - yes[i]) for t, yes in drawn.items()}
        value = statistic(sample)
        if value is not None:
            values.append(value)
    values.sort()
    low = values[int(0.025 * (len(values) - 1))]
    high = values[round(0.975 * (len(values) - 1))]
    return (low, high)


def _accuracy(labels: list[bool], resamples: int, seed: int) -> Accuracy:
    ci = bootstrap_interval({"all": labels}, _overall, resamples=resamples, seed=seed)
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
            task_averaged(groups),
            sum(judged),
            len(judged),
            bootstrap_interval(groups, task_averaged, resamples=resamples, seed=seed),
        ),
        overall=Accuracy(
            _overall(groups),
            sum(judged),
            len(judged),
            bootstrap_interval(groups, _overall, resamples=resamples, seed=seed),
        ),
        abstention=_accuracy(abstention, resamples, seed),
        not_judged=sum(r.label is None for r in rows),
    )
