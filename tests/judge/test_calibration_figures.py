"""Calibration figures against independent computations from the same labels: agreement and
Cohen's κ by the textbook formula (and scikit-learn's when installed), the confusion rates,
the accuracy difference, and the Rogan-Gladen estimate."""

from __future__ import annotations

import random

import pytest

from lme_bench.judge.calibration.figures import Pair, calibration_figures
from lme_bench.metrics.judge_agreement import Table, corrected_estimate


def _pairs(seed: int, n: int, types: tuple[str, ...]) -> list[Pair]:
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        reference = rng.random() < 0.6
        candidate = reference if rng.random() < 0.8 else not reference
        pairs.append(Pair(f"q{i}", types[i % len(types)], reference, candidate))
    return pairs


def _textbook(reference: list[bool], candidate: list[bool]) -> tuple[float, float]:
    """Agreement and κ from the 2x2 table: po = (a + d) / n, pe = p_ref_yes * p_cand_yes +
    p_ref_no * p_cand_no, κ = (po - pe) / (1 - pe)."""
    n = len(reference)
    a = sum(r and c for r, c in zip(reference, candidate, strict=True))
    b = sum(r and not c for r, c in zip(reference, candidate, strict=True))
    c_ = sum(not r and c for r, c in zip(reference, candidate, strict=True))
    d = n - a - b - c_
    po = (a + d) / n
    pe = ((a + b) / n) * ((a + c_) / n) + ((c_ + d) / n) * ((b + d) / n)
    return po, (po - pe) / (1 - pe)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_agreement_and_kappa_equal_the_textbook_formula(seed: int) -> None:
    types = ("multi-session", "temporal-reasoning", "knowledge-update")
    pairs = _pairs(seed, 120, types)
    figures = calibration_figures(pairs, resamples=200, seed=0)
    groups = {"overall": pairs, **{t: [p for p in pairs if p.question_type == t] for t in types}}
    for name, group in groups.items():
        found = figures["overall"] if name == "overall" else figures["per_type"][name]
        reference = [p.reference for p in group]
        candidate = [p.candidate for p in group]
        agreement, kappa = _textbook(reference, candidate)
        assert found["n"] == len(group)
        assert found["agreement"] == pytest.approx(agreement)
        assert found["kappa"] == pytest.approx(kappa)
        low, high = found["kappa_ci95"]
        assert low <= found["kappa"] <= high
        ref_yes = sum(reference)
        flips_down = sum(r and not c for r, c in zip(reference, candidate, strict=True))
        flips_up = sum(c and not r for r, c in zip(reference, candidate, strict=True))
        assert found["reference_yes_candidate_no"] == {
            "count": flips_down,
            "rate": pytest.approx(flips_down / ref_yes),
        }
        assert found["reference_no_candidate_yes"]["count"] == flips_up
        assert found["reference_no_candidate_yes"]["rate"] == pytest.approx(
            flips_up / (len(group) - ref_yes)
        )
        assert found["accuracy_difference"] == pytest.approx(
            (sum(candidate) - sum(reference)) / len(group)
        )


def test_kappa_equals_scikit_learns() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    pairs = _pairs(3, 200, ("multi-session",))
    figures = calibration_figures(pairs, resamples=10, seed=0)
    expected = metrics.cohen_kappa_score([p.reference for p in pairs], [p.candidate for p in pairs])
    assert figures["overall"]["kappa"] == pytest.approx(expected)


def test_intervals_are_seeded_and_one_label_only_gives_no_kappa() -> None:
    pairs = _pairs(5, 60, ("multi-session", "knowledge-update"))
    first = calibration_figures(pairs, resamples=300, seed=4)
    assert calibration_figures(pairs, resamples=300, seed=4) == first
    assert calibration_figures(pairs, resamples=300, seed=5) != first
    same = [Pair(f"q{i}", "multi-session", True, True) for i in range(5)]
    lone = calibration_figures(same, resamples=50, seed=0)["overall"]
    assert lone["agreement"] == 1.0 and lone["kappa"] is None


def test_the_corrected_estimate_is_rogan_gladen_clipped() -> None:
    # tpr = 90 / 100, fpr = 10 / 50
    table = Table(both_yes=90, reference_yes_candidate_no=10, reference_no_candidate_yes=10,
                  both_no=40)  # fmt: skip
    run = {"multi-session": (60, 100)}
    found = corrected_estimate(run, {"multi-session": table}, resamples=500, seed=0)
    assert found.tpr == pytest.approx(0.9) and found.fpr == pytest.approx(0.2)
    assert found.value == pytest.approx((0.6 - 0.2) / (0.9 - 0.2))
    assert found.ci95 is not None and found.value is not None
    low, high = found.ci95
    assert low < found.value < high
    clipped = corrected_estimate({"x": (1, 100)}, {"x": table}, resamples=50, seed=0)
    assert clipped.value == 0.0
    perfect = Table(both_yes=30, both_no=20)
    same = corrected_estimate({"x": (7, 10)}, {"x": perfect}, resamples=50, seed=0)
    assert same.value == pytest.approx(0.7)
    useless = Table(both_yes=5, reference_yes_candidate_no=5, reference_no_candidate_yes=5,
                    both_no=5)  # fmt: skip
    assert corrected_estimate({"x": (5, 10)}, {"x": useless}).value is None


def test_the_estimates_interval_carries_the_calibrations_uncertainty() -> None:
    """Same run, same rates: a calibration of 40 pairs gives a wider interval than one of
    4,000, and the point estimate does not move."""
    run = {"multi-session": (600, 1000)}
    small = Table(18, 2, 4, 16)  # tpr 0.9, fpr 0.2
    large = Table(1800, 200, 400, 1600)
    few = corrected_estimate(run, {"multi-session": small}, resamples=1000, seed=0)
    many = corrected_estimate(run, {"multi-session": large}, resamples=1000, seed=0)
    assert few.value == pytest.approx(many.value or 0.0)
    assert few.ci95 is not None and many.ci95 is not None
    assert few.ci95[1] - few.ci95[0] > 2 * (many.ci95[1] - many.ci95[0])
