"""A run on a plug-in backend whose hits name sessions it was never given (keys shifted by one,
or keys of its own) says so where people look: summary.md's header, report.html, the run's
last line; its provenance is not "exact" and its retrieval rows say why. The same run on the
correct example backend still says "exact"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.report.run_report import headline
from tests.benchmarks.locomo.samples import listed_sample, write_json
from tests.ingest.test_memory_health import QA, _run, _settings

ROOT = Path(__file__).resolve().parents[2]
MISNAMING = "tests/backends/misnaming_backend.py"
EXAMPLE = "docs/example_backend.py:SessionNotes"
HEADER = "**Provenance unverified**: 100.0% of hits name sessions never stored"


def _report(tmp_path: Path, backend: str) -> tuple[str, str, str, list[dict[str, object]]]:
    """(summary.md, report.html, headline, session rows) of three sample questions."""
    settings = _settings(tmp_path, None, **{"memory.backend": backend, **QA})
    report, _ = _run(settings, limit=3)
    rows = pq.read_table(report.run_dir / "retrieval.parquet").to_pylist()
    return (
        (report.run_dir / "summary.md").read_text(),
        (report.run_dir / "report.html").read_text(),
        headline(report.summary),
        [r for r in rows if r["granularity"] == "session"],
    )


def _header(summary: str) -> str:
    """The title and the paragraphs before the first section."""
    return summary.partition("\n## ")[0]


@pytest.mark.parametrize("backend", ["ShiftedKeys", "WrongKeys"])
def test_a_backend_naming_sessions_never_stored_is_unverified(tmp_path: Path, backend: str) -> None:
    summary, html, line, rows = _report(tmp_path, f"{MISNAMING}:{backend}")
    assert HEADER in _header(summary)
    assert "- hits mapped to the haystack: session level: unverified: 100.0% of hits" in summary
    assert "exact (the system's own" not in summary
    assert 'id="provenance-unverified"' in html and "unverified: 100.0% of hits" in html
    assert "provenance unverified: 100.0% of hits name sessions never stored" in line
    assert all(r["unstored_hits"] == r["named_hits"] > 0 for r in rows)
    assert all("never stored" in str(r["unstored_reason"]) for r in rows)
    assert "retrieval: every hit names a session never stored: " in html  # per question
    if backend == "ShiftedKeys":  # most shifted keys name a stored session: another's text
        assert all("holding the text of another session" in str(r["unstored_reason"]) for r in rows)
        assert {r["status"] for r in rows} == {"ok"}
    else:  # no key maps: not applicable, because of the names
        assert all(
            "by a session key never ingested ('note-s0" in str(r["unstored_reason"]) for r in rows
        )
        assert {r["status"] for r in rows} == {"not-applicable"}
        assert all(
            str(r["reason"]).startswith("every hit names a session never stored") for r in rows
        )


def test_the_correct_backend_is_still_exact(tmp_path: Path) -> None:
    summary, html, line, rows = _report(tmp_path, EXAMPLE)
    assert "unverified" not in summary and "unverified" not in html and "unverified" not in line
    assert "- hits mapped to the haystack: session level: exact (the system's own" in summary
    assert all(r["named_hits"] and r["unstored_hits"] == 0 for r in rows)
    assert all(r["unstored_reason"] is None for r in rows)


def test_the_built_in_store_on_locomo_names_only_what_it_stored(tmp_path: Path) -> None:
    """Shared conversations, named speakers: every hit's name still checks out."""
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    stages = {"run.stages": ["ingest", "retrieval"], "qa.strategy": "single"}
    settings = _settings(tmp_path, None, **{"dataset.path": str(data), **stages})
    report, _ = _run(settings, limit=10)
    for granularity in ("session", "turn"):
        names = report.summary[granularity]["names"]
        assert names["named_hits"] > 0 and names["unstored_hits"] == 0, granularity
    assert "unverified" not in report.markdown and "unverified" not in headline(report.summary)


@pytest.mark.slow
def test_the_cli_run_says_so_in_its_last_line_and_summary(tmp_path: Path) -> None:
    config = tmp_path / "shifted.toml"
    config.write_text(
        f'[memory]\nbackend = "{MISNAMING}:ShiftedKeys"\n\n'
        '[models]\nqa = "fake:quote-memory"\njudge = "fake:match-judge"\n'
    )
    results = str(tmp_path / "results")
    command = ["run", str(config), "--limit", "3", "--results-dir", results, "--run-id", "shifted"]
    done = subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_LOGGING_LEVEL": "INFO"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = done.stdout + done.stderr
    last = next(line for line in reversed(logs.splitlines()) if "questions done" in line)
    assert "provenance unverified: 100.0% of hits name sessions never stored" in last
    assert HEADER in _header(done.stdout)
    html = (tmp_path / "results" / "shifted" / "report.html").read_text()
    assert 'id="provenance-unverified"' in html
