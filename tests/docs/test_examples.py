"""The documentation's shell and TOML examples work as written (see tests/docs/examples.py)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import Settings, load_settings
from tests.docs.examples import Example, all_examples, examples, scratch_folder

BASH = all_examples("bash")
TOML = all_examples("toml")


def _params(blocks: list[Example], running: bool = False) -> list[Any]:
    """One test case per block; when running it, its marker says slow or skipped (and why)."""
    params = []
    for block in blocks:
        marks: list[pytest.MarkDecorator] = []
        if running and block.marker == "slow":
            marks.append(pytest.mark.slow)
        if running and block.marker == "skip":
            marks.append(pytest.mark.skip(reason=f"{block.name}: {block.reason}"))
        params.append(pytest.param(block, id=block.name, marks=marks))
    return params


def test_the_examples_are_found() -> None:
    # The docs hold runnable examples of both kinds; an empty list would make the rest vacuous.
    assert [e for e in BASH if e.marker in ("run", "slow")]
    assert TOML


def test_the_marker_reader_sees_markers_and_their_absence(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n<!-- example: skip: needs a key -->\n```bash\nrun-it\n```\n\n```bash\nls\n```\n"
    )
    first, second = examples(page)
    assert (first.marker, first.reason, first.text) == ("skip", "needs a key", "run-it\n")
    assert second.marker is None


@pytest.mark.parametrize("block", _params(BASH))
def test_every_shell_example_is_marked(block: Example) -> None:
    assert block.marker is not None, (
        f"{block.name}: mark the block <!-- example: run -->, <!-- example: slow --> or "
        "<!-- example: skip: REASON -->"
    )
    if block.marker == "skip":
        assert block.reason, f"{block.name}: a skipped example says why"


@pytest.mark.parametrize("block", _params([b for b in BASH if b.marker], running=True))
def test_shell_example_runs(block: Example, tmp_path: Path) -> None:
    env = scratch_folder(tmp_path)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.text],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (
        f"{block.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )


@pytest.mark.parametrize("block", _params(TOML))
def test_toml_example_parses_and_loads(block: Example, tmp_path: Path) -> None:
    data = tomllib.loads(block.text)
    if not set(data) <= set(Settings.model_fields):
        pytest.fail(
            f"{block.name}: tables {sorted(set(data) - set(Settings.model_fields))} "
            "are no settings sections"
        )
    config = tmp_path / "example.toml"
    config.write_text(block.text)
    settings = load_settings(config)
    for section, values in data.items():
        loaded = getattr(settings, section)
        for key in values if isinstance(values, dict) else ():
            if hasattr(loaded, key):
                assert getattr(loaded, key) is not None, f"{block.name}: [{section}] {key} lost"
