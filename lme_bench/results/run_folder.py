"""A run's folder as a later command finds it (rerun, failed-only)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any


class RerunError(ValueError):
    """The run to rerun does not exist or has nothing to rerun."""


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    if not path.is_file():
        raise RerunError(f"{run_dir}: no run here (no manifest.json); check the run id")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def rerun_command(run_id: str, results_dir: Path | str) -> str:
    """The `lme-bench rerun` command that finds the run as typed: its results folder named
    always (a rerun reads no config file, so a folder set there is not its default results/)."""
    return shlex.join(["lme-bench", "rerun", run_id, "--results-dir", str(results_dir)])
