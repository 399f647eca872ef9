"""What a real model run's reports must say plainly: durations as wall time or summed over
questions, the dataset file with its sha256, and wrong answers whose evidence cannot be known
(context-only ingestion) attributed as not applicable instead of "no evidence turns"."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.shards import PreparedDataset
from lme_bench.run.finish import RunReport
from tests.every_stage import run_every_stage

ROOT = Path(__file__).resolve().parents[2]
AGENTIC = ROOT / "configs" / "agentic-fake.toml"
QA = {"models.qa": "fake:quote-memory", "models.judge": "fake:match-judge"}


def _settings(tmp_path: Path, config: Path | None = None, **overrides: Any) -> Settings:
    return load_settings(config, **{"run.results_dir": str(tmp_path), "run.id": "r", **overrides})


def _run(
    settings: Settings, limit: int, wall: timedelta = timedelta(0)
) -> tuple[RunReport, PreparedDataset]:
    """The run having started `wall` before its report."""
    report, _, prepared = run_every_stage(settings, limit, datetime.now(UTC) - wall)
    return report, prepared


def test_durations_say_wall_or_summed_and_the_run_wall_time_is_shown(tmp_path: Path) -> None:
    report, _ = _run(_settings(tmp_path), limit=3, wall=timedelta(minutes=6, seconds=13))
    wall = report.summary["run"]["wall_seconds"]
    assert 373 <= wall < 373 + 120
    markdown = (report.run_dir / "summary.md").read_text()
    assert re.search(r"^- run time: 6 min \d+ s wall \(from the run's start", markdown, re.M)
    ingestion = markdown.split("## Ingestion", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"ingestion [\d.]+ m?s summed over 3 questions \(not wall time\)", ingestion)
    page = (report.run_dir / "report.html").read_text()
    assert re.search(r"<th>run time</th><td>6 min \d+ s wall", page)
    assert "<th>ingestion time, summed over 3 questions</th>" in page
    assert json.loads((report.run_dir / "summary.json").read_text())["run"]["wall_seconds"] == wall


def test_summary_and_report_name_the_dataset_file_and_its_sha256(tmp_path: Path) -> None:
    report, prepared = _run(_settings(tmp_path), limit=2)
    manifest = json.loads((report.run_dir / "manifest.json").read_text())
    assert manifest["dataset"]["sha256"] == prepared.sha256 and len(prepared.sha256) == 64
    named = f"{prepared.path} (sha256 {prepared.sha256})"
    assert f"- dataset: {named}" in (report.run_dir / "summary.md").read_text()
    assert f"<th>dataset</th><td>{named}</td>" in (report.run_dir / "report.html").read_text()


def test_context_only_wrong_answers_with_evidence_are_attributed_not_applicable(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path, AGENTIC, **{"ingest.mode": "context-only", **QA})
    report, _ = _run(settings, limit=6)
    hypotheses = {
        h["question_id"]: h
        for h in pq.read_table(report.run_dir / "hypotheses.parquet").to_pylist()
    }
    assert all(h["evidence_in_context"] is None for h in hypotheses.values())  # unknowable
    retrieval = pq.read_table(report.run_dir / "retrieval.parquet").to_pylist()
    with_evidence = {  # evidence in the official (user) turn corpus
        r["question_id"] for r in retrieval if r["granularity"] == "turn" and r["n_evidence"]
    }
    scores = pq.read_table(report.run_dir / "scores.parquet").to_pylist()
    wrong = [s for s in scores if s["label"] is False]
    evidenced = [
        s
        for s in wrong
        if s["question_id"] in with_evidence and not hypotheses[s["question_id"]]["is_abstention"]
    ]
    assert evidenced, "the stand-in reader answers some evidenced questions wrong"
    assert {s["attribution"] for s in evidenced} == {"evidence-not-applicable"}
    others = [s for s in wrong if s not in evidenced]  # abstention, no user-turn evidence
    assert all(s["attribution"] == "answered-wrong" for s in others)
    page = (report.run_dir / "report.html").read_text()
    assert "evidence retrieved: not applicable" in page
