"""Paired comparison of two runs: deltas B - A and their paired bootstrap 95% intervals.

Deltas are taken over the questions scored in BOTH runs (the pairs). A pair is (a, b): the
question's value in run A and in run B (1.0/0.0 for a QA label, the metric for retrieval).

- per-type delta: mean(b) - mean(a) over the pairs of that type;
- task-averaged delta: the plain mean of the per-type deltas (= task-averaged accuracy of B minus
  that of A, both over the pairs);
- overall delta: mean(b) - mean(a) over all pairs (each question counts once);
- abstention delta: the overall delta over the `_abs` pairs.
Interval: percentile bootstrap; each resample draws, within each question type, as many pairs as
the type has, with replacement (a question's a and b values stay together), and recomputes the
statistic (the task-averaged one from the resample's per-type means). Seeded with
`random.Random(seed)`, types visited in sorted order and pairs in question-id order, so the same
inputs always give the same interval. Bounds: the sorted resample values at indexes
int(0.025 * (R - 1)) and round(0.975 * (R - 1)), as in lme_bench.metrics.qa.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.metrics.qa import Accuracy, Judged, score_qa

Interval = tuple[float, float]
Pair = tuple[float, float]
Groups = dict[str, list[Pair]]  # question type -> pairs
Statistic = Callable[[Groups], float | None]


@dataclass(frozen=True, slots=True)
class PairedDelta:
    n: int  # pairs: questions scored in both runs
    a: float | None  # statistic of A over the pairs
    b: float | None  # statistic of B over the pairs
    delta: float | None  # b - a
    ci95: Interval | None


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    a: Accuracy  # run A on its own judged questions
    b: Accuracy  # run B on its own judged questions
    paired: PairedDelta


@dataclass(frozen=True, slots=True)
class Flip:
    question_id: str
    question_type: str


@dataclass(frozen=True, slots=True)
class QaComparison:
    per_type: list[Row]
    task_averaged: Row
    overall: Row
    abstention: Row
    regressed: list[Flip]  # correct in A, wrong in B
    improved: list[Flip]  # wrong in A, correct in B


@dataclass(frozen=True, slots=True)
class MetricComparison:
    metric: str
    paired: PairedDelta


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def pooled(groups: Groups, side: int) -> float | None:
    return _mean([pair[side] for pairs in groups.values() for pair in pairs])


def type_averaged(groups: Groups, side: int) -> float | None:
    means = [
        m for m in (_mean([p[side] for p in pairs]) for pairs in groups.values()) if m is not None
    ]
    return _mean(means)


def _difference(stat: Callable[[Groups, int], float | None]) -> Statistic:
    def delta(groups: Groups) -> float | None:
        a, b = stat(groups, 0), stat(groups, 1)
        return None if a is None or b is None else b - a

    return delta


overall_delta: Statistic = _difference(pooled)
task_averaged_delta: Statistic = _difference(type_averaged)


def paired_bootstrap(
    groups: Groups, statistic: Statistic, *, resamples: int = 2000, seed: int = 0
) -> Interval | None:
    """Percentile 95% interval of `statistic` over pair resamples stratified by type."""
    strata = [(t, groups[t]) for t in sorted(groups) if groups[t]]
    if not strata or resamples < 1:
        return None
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        value = statistic({t: rng.choices(pairs, k=len(pairs)) for t, pairs in strata})
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    return (values[int(0.025 * (len(values) - 1))], values[round(0.975 * (len(values) - 1))])


def paired_delta(
    groups: Groups, stat: Callable[[Groups, int], float | None], resamples: int, seed: int
) -> PairedDelta:
    groups = {t: pairs for t, pairs in groups.items() if pairs}
    a, b = stat(groups, 0), stat(groups, 1)
    delta = None if a is None or b is None else b - a
    ci = paired_bootstrap(groups, _difference(stat), resamples=resamples, seed=seed)
    return PairedDelta(
        sum(map(len, groups.values())), a, b, delta, ci if delta is not None else None
    )


def type_order(types: set[str]) -> list[str]:
    """The official question types first, in their usual order, then any others sorted."""
    return [t for t in QUESTION_TYPES if t in types] + sorted(types - set(QUESTION_TYPES))


def _labels(rows: Sequence[Judged]) -> dict[str, Judged]:
    return {r.question_id: r for r in rows if r.label is not None}


def compare_labels(
    a_rows: Sequence[Judged], b_rows: Sequence[Judged], *, resamples: int = 2000, seed: int = 0
) -> QaComparison:
    """Per-type, task-averaged, overall and abstention accuracy of A and B, and paired deltas."""
    a_scores = score_qa(a_rows, resamples=resamples, seed=seed)
    b_scores = score_qa(b_rows, resamples=resamples, seed=seed)
    a_labels, b_labels = _labels(a_rows), _labels(b_rows)
    both = sorted(a_labels.keys() & b_labels.keys())
    groups: Groups = {}
    abstention: Groups = {}
    regressed: list[Flip] = []
    improved: list[Flip] = []
    for qid in both:
        a, b = a_labels[qid], b_labels[qid]
        qtype = a.question_type
        pair = (float(bool(a.label)), float(bool(b.label)))
        groups.setdefault(qtype, []).append(pair)
        if a.is_abstention:
            abstention.setdefault(qtype, []).append(pair)
        if a.label and not b.label:
            regressed.append(Flip(qid, qtype))
        elif b.label and not a.label:
            improved.append(Flip(qid, qtype))
    empty = Accuracy(None, 0, 0)
    per_type = [
        Row(
            t,
            a_scores.per_type.get(t, empty),
            b_scores.per_type.get(t, empty),
            paired_delta({t: groups.get(t, [])}, pooled, resamples, seed),
        )
        for t in type_order({r.question_type for r in [*a_rows, *b_rows]})
    ]
    order = {row.name: i for i, row in enumerate(per_type)}

    def by_flip(flip: Flip) -> tuple[int, str]:
        return order[flip.question_type], flip.question_id

    return QaComparison(
        per_type=per_type,
        task_averaged=Row(
            "task-averaged",
            a_scores.task_averaged,
            b_scores.task_averaged,
            paired_delta(groups, type_averaged, resamples, seed),
        ),
        overall=Row(
            "overall",
            a_scores.overall,
            b_scores.overall,
            paired_delta(groups, pooled, resamples, seed),
        ),
        abstention=Row(
            "abstention",
            a_scores.abstention,
            b_scores.abstention,
            paired_delta(abstention, pooled, resamples, seed),
        ),
        regressed=sorted(regressed, key=by_flip),
        improved=sorted(improved, key=by_flip),
    )


def compare_metrics(
    a: Mapping[str, tuple[str, Mapping[str, float]]],
    b: Mapping[str, tuple[str, Mapping[str, float]]],
    metrics: Sequence[str],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> list[MetricComparison]:
    """Mean of each metric over the questions present in both (question id -> (type, metrics))."""
    both = sorted(a.keys() & b.keys())
    result = []
    for metric in metrics:
        groups: Groups = {}
        for qid in both:
            groups.setdefault(a[qid][0], []).append((a[qid][1][metric], b[qid][1][metric]))
        result.append(MetricComparison(metric, paired_delta(groups, pooled, resamples, seed)))
    return result
