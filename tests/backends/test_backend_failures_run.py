"""A failing backend in a whole `lme-bench run`: one traceback in the output, and the backend's
file and line in the question's error (or in the one-line error a failed start ends with)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.backends import failing_backend
from tests.backends.test_plugin_run import _run

BACKENDS = "tests/backends/failing_backend.py"


def _line_of(function: object, text: str) -> int:
    lines, first = inspect.getsourcelines(function)  # type: ignore[arg-type]
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.slow
def test_a_backend_that_cannot_start_ends_the_run_with_one_traceback(tmp_path: Path) -> None:
    done = _run(
        tmp_path, f"{BACKENDS}:CannotStart", "{}", "--limit", "1", "--results-dir", str(tmp_path)
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    assert output.count("Traceback (most recent call last)") == 1, output[-6000:]
    line = _line_of(failing_backend.CannotStart.__init__, "raise RuntimeError")
    assert (
        "lme-bench: error: RuntimeError: no server at localhost:8000"
        f" (at failing_backend.py:{line} in __init__)"
    ) in done.stderr


@pytest.mark.slow
def test_a_backend_failing_in_search_fails_its_question_with_its_line(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        f"{BACKENDS}:Broken",
        "{}",
        "--limit",
        "1",
        "--results-dir",
        str(tmp_path),
        "--run-id",
        "broken",
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    assert output.count("Traceback (most recent call last)") == 1, output[-6000:]
    line = _line_of(failing_backend._lost_index, "raise RuntimeError")
    where = f"(at failing_backend.py:{line} in _lost_index)"
    rows = pq.read_table(tmp_path / "broken" / "retrieval.parquet").to_pylist()
    assert {row["error"] for row in rows} == {f"RuntimeError: the index is gone {where}"}


@pytest.mark.slow
def test_a_retried_stage_is_one_warning_line_at_the_default_log_level(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        f"{BACKENDS}:BusyOnceInRetrieval",
        "{}",
        "--limit",
        "1",
        "--results-dir",
        str(tmp_path),
        "--run-id",
        "busy",
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    line = _line_of(failing_backend.BusyOnceInRetrieval.search, "raise TransientMemoryError")
    retried = [text for text in output.splitlines() if "; retrying" in text]
    assert len(retried) == 1, output[-3000:]
    assert "WARNING" in retried[0]
    assert (
        ": attempt 1 of 3 failed with TransientMemoryError: server busy"
        f" (at failing_backend.py:{line} in search); retrying"
    ) in retried[0]
