"""A run judged by a successor judge with its profile ([judge] profile): summary.md, report.html
and the manifest show the profile's agreement, κ and the corrected estimate of the official
judge's accuracy, labelled as an estimate; exports keep the actual judge's name; a profile of
another judge is a config error naming both."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.judge.calibration.calibrate import calibrate
from lme_bench.judge.panel import judge_panel
from lme_bench.report.labels import percent
from lme_bench.report.run_report import RunReport, headline
from lme_bench.report.ui_markdown import report_markdown
from lme_bench.run.finish import RunResults, write_run
from lme_bench.run.steps import (
    answer_question,
    bundled_sample,
    evaluate_question,
    ingest_question,
    judge_question,
    plan_run,
    prepare_questions,
    qa_panel,
)

JUDGE = "fake:match-judge"  # yes when the gold answer appears in the response


def _profile(tmp_path: Path) -> Path:
    """A profile of the fake judge against scripted reference labels: gold answers and
    refusals as hypotheses, the reference disagreeing with it on some."""
    lines = []
    for i, loaded in enumerate(iter_questions(bundled_sample())):
        q = loaded.instance
        hypothesis = f"It is {q.answer}." if i % 3 else "I cannot tell."
        label = bool(i % 3) != (i % 5 == 0)  # the fake's label, flipped on every fifth
        verdict = {"model": "gpt-4o-2024-08-06", "label": label}
        lines.append(
            {"question_id": q.question_id, "hypothesis": hypothesis, "autoeval_label": verdict}
        )
    reference = tmp_path / "hyp.jsonl.eval-results-gpt-4o"
    reference.write_text("".join(json.dumps(x) + "\n" for x in lines))
    settings = load_settings(None)
    (done,) = calibrate(reference, bundled_sample(), [JUDGE], settings, tmp_path / "profiles")
    return done.path


def _run(settings: Settings, limit: int) -> RunReport:
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan, limit=limit)
    results = RunResults()
    results.outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    results.retrieval = [
        row
        for r, o in zip(refs, results.outcomes, strict=True)
        for row in asyncio.run(evaluate_question(r, o, settings))
    ]
    answered = [
        asyncio.run(answer_question(r, o.memory_id, qa_panel(settings)))
        for r, o in zip(refs, results.outcomes, strict=True)
    ]
    # scripted answers, right on every other question, so the accuracy is neither 0 nor 1
    results.hypotheses = [
        replace(h, hypothesis=f"It is {r.load().answer}.") if i % 2 else h
        for i, (r, h) in enumerate(zip(refs, answered, strict=True))
    ]
    results.scores = [
        s
        for r, h in zip(refs, results.hypotheses, strict=True)
        for s in asyncio.run(judge_question(r, h, judge_panel(settings)))
    ]
    return write_run(plan, settings, prepared, refs, results, datetime.now(UTC))


def _rogan_gladen(profile: dict[str, Any], correct: int, n: int) -> float:
    """The estimate from the profile's pairs, computed here from the labels themselves."""
    pairs: list[dict[str, Any]] = profile["pairs"]
    ref_yes = [p for p in pairs if p["reference"]]
    ref_no = [p for p in pairs if not p["reference"]]
    tpr = sum(bool(p["candidate"]) for p in ref_yes) / len(ref_yes)
    fpr = sum(bool(p["candidate"]) for p in ref_no) / len(ref_no)
    return min(1.0, max(0.0, (correct / n - fpr) / (tpr - fpr)))


def test_a_run_judged_by_a_successor_shows_its_profile(tmp_path: Path) -> None:
    profile_path = _profile(tmp_path)
    profile = json.loads(profile_path.read_text())
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path / "runs"), "judge.profile": str(profile_path)},
    )
    report = _run(settings, limit=10)
    run_dir = report.run_dir
    summary = json.loads((run_dir / "summary.json").read_text())
    judged = summary["qa"]["judges"][JUDGE]["overall"]
    expected = _rogan_gladen(profile, judged["correct"], judged["n"])
    record = summary["qa"]["judge_profile"]
    assert record["estimate"]["accuracy"] == pytest.approx(expected)
    low, high = record["estimate"]["ci95"]
    assert 0.0 < expected < 1.0 and low < expected < high

    overall = profile["figures"]["overall"]
    agreement, kappa = percent(overall["agreement"]), f"{overall['kappa']:.3f}"
    markdown = (run_dir / "summary.md").read_text()
    html = (run_dir / "report.html").read_text()
    for page in (markdown, html, report_markdown(report)):  # the last: the Prefect UI's
        assert "Judged by a successor judge" in page
        assert f"{JUDGE} (not the official gpt-4o-2024-08-06)" in page
        assert f"{agreement}, κ {kappa}" in page
        assert "estimated gpt-4o-2024-08-06 accuracy (overall)" in page
        assert percent(expected) in page
        assert "The estimate is not an official figure" in page

    assert f"by {JUDGE}, not the official judge (estimated gpt-4o-2024-08-06 accuracy: " in (
        headline(report.summary)
    )

    digest = hashlib.sha256(profile_path.read_bytes()).hexdigest()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["judge_profile"]["path"] == str(profile_path)
    assert manifest["judge_profile"]["sha256"] == digest
    assert manifest["judge_profile"]["kappa"] == overall["kappa"]
    assert manifest["judge_profile"]["estimated_reference_accuracy"] == pytest.approx(expected)

    # exports name the judge that judged, never the official one
    (export,) = run_dir.glob("hypotheses.jsonl.eval-results-*")
    assert export.name == "hypotheses.jsonl.eval-results-match-judge"
    models = {json.loads(x)["autoeval_label"]["model"] for x in export.read_text().splitlines()}
    assert models == {"match-judge"}


def test_a_profile_of_another_judge_is_a_config_error(tmp_path: Path) -> None:
    profile_path = _profile(tmp_path)
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{
            "run.results_dir": str(tmp_path / "runs"),
            "judge.profile": str(profile_path),
            "models.judge": "fake:yes",
        },
    )
    with pytest.raises(ConfigError, match=r"calibrates the judge fake:match-judge.*fake:yes"):
        plan_run(settings)
    missing = settings.model_copy(
        update={"judge": settings.judge.model_copy(update={"profile": tmp_path / "no.json"})}
    )
    with pytest.raises(ConfigError, match=r"\[judge\] profile: .*no\.json not found"):
        plan_run(missing)
