from __future__ import annotations

import pytest

from lme_bench.metrics.qa import Judged, bootstrap_interval, score_qa


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
    first = bootstrap_interval(groups, lambda g: sum(map(sum, g.values())) / 6, seed=3)
    again = bootstrap_interval(groups, lambda g: sum(map(sum, g.values())) / 6, seed=3)
    assert first == again
    assert bootstrap_interval({"a": [True] * 5}, lambda g: 1.0) == (1.0, 1.0)
    assert bootstrap_interval({}, lambda g: 1.0) is None
    empty = score_qa([])
    assert empty.overall.value is None and empty.not_judged == 0


def test_bootstrap_interval_matches_the_normal_approximation_for_many_labels() -> None:
    labels = [True] * 60 + [False] * 40  # 0.6 ± 1.96 * sqrt(0.6 * 0.4 / 100) = 0.504 … 0.696
    low, high = bootstrap_interval({"a": labels}, lambda g: sum(g["a"]) / len(g["a"])) or (0, 0)
    assert abs(low - 0.504) < 0.02 and abs(high - 0.696) < 0.02
    stratified = {"a": [True] * 30 + [False] * 20, "b": [True] * 30 + [False] * 20}
    both = bootstrap_interval(stratified, lambda g: sum(map(sum, g.values())) / 100) or (0, 0)
    assert abs(both[0] - 0.504) < 0.02 and abs(both[1] - 0.696) < 0.02
