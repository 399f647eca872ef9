"""Which frame a failure is pinned to: the innermost one that is not the harness's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lme_bench.run.failure_origin import raised_at

ROOT = Path(__file__).resolve().parents[2]


def define(filename: Path, source: str, names: dict[str, Any]) -> None:
    exec(compile(source, str(filename), "exec"), names)


def error_through(tmp_path: Path, harness_file: Path) -> BaseException:
    """A backend of the user's (outside the clone) calls into a harness file that raises."""
    names: dict[str, Any] = {}
    define(harness_file, "def harness_step():\n    raise RuntimeError('boom')\n", names)
    define(
        tmp_path / "user_backend.py",
        "def search():\n    return harness_step()\n",
        names,
    )
    with pytest.raises(RuntimeError) as caught:
        names["search"]()
    return caught.value


@pytest.mark.parametrize("folder", ["lme_bench/run", "tasks", "flows"])
def test_the_harness_own_folders_are_passed_over(tmp_path: Path, folder: str) -> None:
    error = error_through(tmp_path, ROOT / folder / "not_a_real_module.py")
    assert raised_at(error) == "user_backend.py:2 in search"


def test_a_file_elsewhere_is_the_origin(tmp_path: Path) -> None:
    error = error_through(tmp_path, tmp_path / "their_helpers.py")
    assert raised_at(error) == "their_helpers.py:2 in harness_step"
