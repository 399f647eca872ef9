"""An ingest-only run (`[run] stages = ["ingest"]`) as a user starts it: it exits 0, prints its
summary and leaves summary.md with the ingestion, whatever the backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["embedded", "docs/example_backend.py:SessionNotes"])
def test_an_ingest_only_run_exits_0_with_its_ingestion_summary(
    tmp_path: Path, backend: str
) -> None:
    config = tmp_path / "ingest-only.toml"
    config.write_text(f'[memory]\nbackend = "{backend}"\n\n[run]\nstages = ["ingest"]\n')
    results = tmp_path / "results"
    command = ["run", str(config), "--limit", "2", "--run-id", "ingest-only"]
    done = subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", *command, "--results-dir", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    run_dir = results / "ingest-only"
    summary = (run_dir / "summary.md").read_text()
    assert "## Ingestion: raw" in summary
    assert "2 questions, " in summary.partition("## Ingestion")[2]
    assert "Not run: this run folder holds no retrieval rows." in summary
    assert "| overall | 0 |" not in summary  # no empty retrieval tables
    assert summary.strip() in done.stdout  # the command prints what it wrote
    figures = json.loads((run_dir / "summary.json").read_text())
    assert figures["ingestion"]["questions"] == 2
    assert not (run_dir / "retrieval.parquet").exists()
    assert not (run_dir / "report.html").exists()  # the report stage did not run
