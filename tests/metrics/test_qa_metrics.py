from __future__ import annotations

import pytest

from lme_bench.metrics.qa import Judged, bootstrap_interval, overall_of, score_qa, task_averaged_of


def _rows(question_type: str, labels: list[bool | None], prefix: str) -> list[Judged]:
    return [Judged(f"{prefix}{i}", question_type, label) for i, label in enumerate(labels)]


def test_task_averaged_and_overall_differ_on_unbalanced_types() -> None:
    # Hand-computed: temporal 8/10 = 0.8, knowledge-update 1/2 = 0.5, preference 0/1 = 0.
    rows = (
        _rows("temporal-reasoning", [True] * 8 + [False] * 2, "t")
        + _rows("knowledge-update", [True, False], "k")
        + _rows("single-session-preference", [False], "p")
        + [Judged("k9_abs", "knowledge-update", True), Judged("t9_abs", "temporal-reasoning", None)]
    )
    scores = score_qa(rows, resamples=500)
    assert scores.per_type["temporal-reasoning"].value == pytest.approx(0.8)
    assert scores.per_type["knowledge-update"].value == pytest.approx(2 / 3)  # _abs inside its type
    assert scores.per_type["knowledge-update"].n == 3
    assert scores.task_averaged.value == pytest.approx((0.8 + 2 / 3 + 0.0) / 3)
    assert scores.overall.value == pytest.approx(10 / 14)
    assert scores.task_averaged.value != scores.overall.value
    assert scores.abstention.value == 1.0 and scores.abstention.n == 1
    assert scores.not_judged == 1  # no verdict: counted apart, never as wrong
    low, high = scores.overall.ci95 or (0, 0)
    assert low < 10 / 14 < high and low >= 0 and high <= 1


def test_bootstrap_is_seeded_and_degenerate_cases() -> None:
    groups = {"a": [True, False, True, True], "b": [False, True]}
    first = bootstrap_interval(groups, overall_of, seed=3)
    again = bootstrap_interval(groups, overall_of, seed=3)
    assert first == again
    assert bootstrap_interval({"a": [True] * 5}, overall_of) == (1.0, 1.0)
    assert bootstrap_interval({}, overall_of) is None
    empty = score_qa([])
    assert empty.overall.value is None and empty.not_judged == 0


def test_bootstrap_interval_matches_the_normal_approximation_for_many_labels() -> None:
    labels = [True] * 60 + [False] * 40  # 0.6 ± 1.96 * sqrt(0.6 * 0.4 / 100) = 0.504 … 0.696
    low, high = bootstrap_interval({"a": labels}, overall_of) or (0, 0)
    assert abs(low - 0.504) < 0.02 and abs(high - 0.696) < 0.02
    stratified = {"a": [True] * 30 + [False] * 20, "b": [True] * 30 + [False] * 20}
    both = bootstrap_interval(stratified, overall_of) or (0, 0)
    assert abs(both[0] - 0.504) < 0.02 and abs(both[1] - 0.696) < 0.02


def test_intervals_from_counts_equal_those_from_resampled_labels() -> None:
    """The statistics read each type's (yes, n): the same floats, bit for bit, as building the
    resample's labels and averaging them (what the interval was computed from before)."""
    import random

    import numpy

    def from_labels(groups: dict[str, list[bool]], statistic: str) -> tuple[float, float]:
        rng = numpy.random.default_rng(0)
        drawn = {
            t: rng.binomial(len(v), sum(v) / len(v), size=2000).tolist() for t, v in groups.items()
        }
        values = []
        for i in range(2000):
            sample = {
                t: [True] * yes[i] + [False] * (len(groups[t]) - yes[i]) for t, yes in drawn.items()
            }
            if statistic == "overall":
                flat = [label for labels in sample.values() for label in labels]
                values.append(sum(flat) / len(flat))
            else:
                means = [sum(v) / len(v) for v in sample.values()]
                values.append(sum(means) / len(means))
        values.sort()
        return values[int(0.025 * 1999)], values[round(0.975 * 1999)]

    rng = random.Random(7)
    for _ in range(5):
        groups = {
            f"type{t}": [rng.random() < 0.6 for _ in range(rng.randint(1, 40))]
            for t in range(rng.randint(1, 6))
        }
        assert bootstrap_interval(groups, overall_of) == from_labels(groups, "overall")
        assert bootstrap_interval(groups, task_averaged_of) == from_labels(groups, "task")
