"""Shared fixtures: an isolated Prefect home, and a writer of small dataset files."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# Keep Prefect's state out of ~/.prefect and quiet; set before anything imports prefect.
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="lme-prefect-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
# A loaded CI machine can take longer than the default 20 s to start the temporary server.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


@pytest.fixture
def write_dataset(tmp_path: Path) -> Callable[..., Path]:
    def write(questions: Any, name: str = "data.json", raw: bytes | None = None) -> Path:
        path = tmp_path / name
        path.write_bytes(raw if raw is not None else json.dumps(questions).encode())
        return path

    return write
