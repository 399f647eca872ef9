"""The key-free weekly run moves: `lme-bench run configs/weekly.toml` on the bundled sample
answers some questions right, and the same run with a worse memory setting (one entry a search
instead of ten, as a user sets it with LME_QA__TOP_KE or a deployment's overrides) scores lower."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.config.settings import load_settings
from tests.faults.runs import ROOT, cli_env

pytestmark = pytest.mark.slow  # real runs, each with its temporary Prefect server
WEEKLY = ROOT / "configs" / "weekly.toml"
DOCUMENTED = re.compile(r"scores QA ([\d.]+)% \((\d+) of 34\), and ([\d.]+)% \((\d+) of 34\)")


def _weekly_run(tmp_path: Path, run_id: str, **env: str) -> tuple[dict[str, Any], Path]:
    """The weekly config's run `run_id`: its judge's QA figures and its folder."""
    done = subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", str(WEEKLY),
         "--results-dir", str(tmp_path / "results"), "--run-id", run_id],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env=cli_env(tmp_path / "prefect", **env),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = tmp_path / "results" / run_id
    judge = load_settings(WEEKLY).models.judge
    summary = json.loads((run_dir / "summary.json").read_text())
    return summary["qa"]["judges"][judge], run_dir


def _right(run_dir: Path, judge: str) -> list[dict[str, Any]]:
    rows = pq.read_table(run_dir / "scores.parquet").to_pylist()
    return [r for r in rows if r["judge"] == judge and r["label"] is True]


def test_the_weekly_run_scores_above_zero_and_a_worse_memory_setting_scores_lower(
    tmp_path: Path,
) -> None:
    judge = load_settings(WEEKLY).models.judge
    first, first_dir = _weekly_run(tmp_path, "week-1")
    assert first["overall"]["n"] == 34  # every question of the sample judged
    assert first["overall"]["accuracy"] > 0
    right = _right(first_dir, judge)
    assert any(not r["is_abstention"] for r in right)  # answered, not only "I don't know"

    worse, worse_dir = _weekly_run(tmp_path, "week-2", LME_QA__TOP_KE="1")
    assert json.loads((worse_dir / "config.json").read_text())["settings"]["qa"]["top_ke"] == 1
    assert worse["overall"]["n"] == 34
    assert worse["overall"]["accuracy"] < first["overall"]["accuracy"]

    told = DOCUMENTED.search(" ".join((ROOT / "docs" / "prefect.md").read_text().split()))
    assert told, "docs/prefect.md gives the weekly run's figures"
    shown = [(first["overall"]["correct"], first["overall"]["accuracy"]),
             (worse["overall"]["correct"], worse["overall"]["accuracy"])]  # fmt: skip
    documented = [(int(told[2]), float(told[1])), (int(told[4]), float(told[3]))]
    assert [(n, round(100 * a, 1)) for n, a in shown] == documented
