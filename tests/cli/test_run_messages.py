"""What `lme-bench run` prints, as a user sees it in a real process: an error that stops a run
told once, failures grouped by cause, model calls counted as made."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.runs import cli_env

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # real runs, each with its temporary Prefect server


def _run(tmp_path: Path, config: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", str(config),
         "--results-dir", str(tmp_path / "results"), *options],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=cli_env(tmp_path / "prefect", PREFECT_LOGGING_LEVEL="INFO"),
    )  # fmt: skip


def test_model_calls_count_the_calls_made_not_the_cached_results(tmp_path: Path) -> None:
    options = ("--limit", "3", "--run-id", "again")
    first = _run(tmp_path, ROOT / "configs/full-fake.toml", *options)
    assert first.returncode == 0, first.stderr[-3000:]
    made = re.findall(r"3/3 questions \| [^|]+ \| (\d+) model calls", first.stderr)
    assert made and int(made[-1]) > 0, first.stderr[-3000:]
    second = _run(tmp_path, ROOT / "configs/full-fake.toml", *options)  # all from the cache
    assert second.returncode == 0, second.stderr[-3000:]
    final = (
        f"3/3 questions | ingest 3 retrieval 3 answer 3 judge 3 | 0 model calls ({made[-1]} more"
    )
    assert final in second.stderr, second.stderr[-3000:]
