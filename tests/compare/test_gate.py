"""The regression rule on a paired change: the 95% interval wholly below zero AND a drop of at
least `min_drop` points; and the verdict's one line ("regressed: QA overall -14.7 pt …")."""

from __future__ import annotations

from lme_bench.compare.gate import FigureChange, GateVerdict, fell
from lme_bench.compare.paired import PairedDelta
from lme_bench.report.regression import regression_message


def _change(delta: float, low: float, high: float) -> PairedDelta:
    return PairedDelta(n=40, a=0.8, b=0.8 + delta, delta=delta, ci95=(low, high))


def test_a_figure_falls_only_when_the_interval_is_below_zero_and_the_drop_big_enough() -> None:
    assert fell(_change(-0.147, -0.265, -0.029), 2.0)
    assert not fell(_change(-0.147, -0.265, 0.001), 2.0)  # the interval reaches zero
    assert not fell(_change(-0.015, -0.02, -0.01), 2.0)  # sure, but under 2 points
    assert fell(_change(-0.015, -0.02, -0.01), 1.5)
    assert not fell(_change(0.05, 0.01, 0.09), 0.0)  # a rise
    assert not fell(PairedDelta(0, None, None, None, None), 0.0)  # not measured
    assert not fell(_change(-0.2, -0.2, -0.2), 2.0)  # no spread: one question per type


def test_the_verdict_line_names_what_fell_by_how_much_with_its_interval_and_baseline() -> None:
    overall = FigureChange("qa.overall", "QA overall", _change(-0.147, -0.265, -0.029), True)
    recall = FigureChange(
        "retrieval.session.recall_all@5",
        "session recall_all@5",
        PairedDelta(40, 0.7, 0.7, 0.0, (0.0, 0.0)),
        False,
    )
    verdict = GateVerdict("run-20261124-030000", "run-20261201-030000", 2.0, [overall, recall], [])
    assert verdict.regressed and verdict.fallen == [overall]
    assert regression_message(verdict) == (
        "regressed: QA overall \u221214.7 pt [\u221226.5, \u22122.9] vs run-20261124-030000"
    )
    held = GateVerdict("w1", "w2", 2.0, [recall], ["qa.overall"])
    assert regression_message(held) == "no regression vs w1: session recall_all@5 +0.0 pt" + (
        " (no spread, +0.0)"
    )
