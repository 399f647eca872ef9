"""A run's folder as a later command finds it (rerun, failed-only)."""

from __future__ import annotations

import json
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
