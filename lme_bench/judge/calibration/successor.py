"""A run judged by a successor judge, read through its profile (`[judge] profile`): the
profile's agreement and κ with the reference judge, and an estimate of the reference judge's
overall accuracy on this run, corrected through the profile's confusion rates.

The interval resamples both the run's questions (within each type, binomially) and the
profile's calibration pairs (within each type, from its stored 2x2 tables), so it carries the
uncertainty of the calibration as well as the run's (lme_bench.metrics.judge_agreement)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench.judge.calibration.profile import load_profile, profile_tables
from lme_bench.metrics.judge_agreement import corrected_estimate

ESTIMATE_NOTE = (
    "not an official figure: the successor's overall accuracy corrected through "
    "the profile's rates of disagreement with the reference judge (Rogan-Gladen), assuming it "
    "errs on this run's answers as it did on the calibration answers"
)


def successor_record(
    path: Path,
    per_type: dict[str, Any],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """What summary.json holds under qa.judge_profile; `per_type`: the run's judge figures per
    question type (each with `correct` and `n`)."""
    profile, sha256 = load_profile(path)
    run_counts = {t: (int(a["correct"]), int(a["n"])) for t, a in per_type.items() if a["n"]}
    found = corrected_estimate(run_counts, profile_tables(profile), resamples=resamples, seed=seed)
    overall = profile["figures"]["overall"]
    reference = profile.get("reference") or {}
    return {
        "path": str(path),
        "sha256": sha256,
        "judge": profile["candidate"]["judge"],
        "reference_judge": reference.get("judge_model"),
        "prompts": (profile.get("prompts") or {}).get("description"),
        "calibration_n": profile.get("n"),
        "agreement": overall.get("agreement"),
        "kappa": overall.get("kappa"),
        "kappa_ci95": overall.get("kappa_ci95"),
        "estimate": {
            "accuracy": found.value,
            "ci95": found.ci95,
            "tpr": found.tpr,
            "fpr": found.fpr,
            "resamples": found.resamples,
            "resamples_dropped": found.dropped,
            "seed": seed,
            "note": ESTIMATE_NOTE,
        },
    }


def manifest_record(record: dict[str, Any]) -> dict[str, Any]:
    """The manifest's account of the profile: where, its sha256, its headline figures."""
    return {
        "path": record["path"],
        "sha256": record["sha256"],
        "judge": record["judge"],
        "reference_judge": record["reference_judge"],
        "calibration_n": record["calibration_n"],
        "agreement": record["agreement"],
        "kappa": record["kappa"],
        "estimated_reference_accuracy": record["estimate"]["accuracy"],
        "estimated_reference_accuracy_ci95": record["estimate"]["ci95"],
    }
