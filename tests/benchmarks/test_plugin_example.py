"""docs/benchmarks.md's plug-in benchmark works as written: its class loads by file path, by
`module:Class` and by an entry point, recognises its files, and its commands run it through
`lme-bench run` end to end."""

from __future__ import annotations

import os
import subprocess
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from lme_bench.benchmarks import registry
from lme_bench.benchmarks.protocol import Benchmark
from lme_bench.benchmarks.split import splitter_for
from tests.docs.examples import ROOT, Example, examples

PAGE = ROOT / "docs" / "benchmarks.md"


def _section_blocks() -> list[Example]:
    text = PAGE.read_text(encoding="utf-8")
    start = text[: text.index("## Adding a benchmark")].count("\n") + 1
    end = text[: text.index("\n## ", text.index("## Adding a benchmark"))].count("\n") + 1
    return [e for e in examples(PAGE) if start < e.line < end]


def _written(folder: Path, name: str = "notes.py") -> Path:
    (code,) = [e for e in _section_blocks() if e.language == "python"]
    path = folder / name
    path.write_text(code.text, encoding="utf-8")
    (folder / "shopping.notes").write_text("milk\neggs\n", encoding="utf-8")
    return path


def test_the_class_loads_by_path_module_and_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = _written(tmp_path)
    by_path = registry.load_benchmark(f"{code}:Notes")
    assert isinstance(by_path, Benchmark) and by_path.name == "notes"
    _written(tmp_path, "lme_notes_example.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registry.load_benchmark("lme_notes_example:Notes").name == "notes"
    point = EntryPoint("notes", "lme_notes_example:Notes", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] * (group == point.group))
    assert registry.load_benchmark("notes").name == "notes"
    data = tmp_path / "shopping.notes"
    assert registry.detect_benchmark(data).name == "notes"  # after the built-ins decline it
    split, kind = splitter_for(None, data)
    assert split is not None and kind == "notes"
    (tmp_path / "split").mkdir()
    (ref,) = split(data, tmp_path / "split")
    assert (ref.question_id, ref.build_id, ref.n_turns, ref.benchmark) == (
        "n1",
        "shopping",
        2,
        "notes",
    )
    assert ref.build.startswith("shopping@")  # the build id with its content's digest


@pytest.mark.slow  # runs the whole flow
def test_the_documented_commands_run_it(tmp_path: Path) -> None:
    _written(tmp_path)
    (commands,) = [e for e in _section_blocks() if e.language == "bash"]
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_API_URL"))}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands.text],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 of 1 questions answered (0 failed)" in done.stdout
    assert "1 memory build, 1 sessions, 2 turns" in done.stdout
