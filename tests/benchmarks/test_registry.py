"""Benchmarks are found as backends are: a built-in name, an entry point, 'module:Class' or a
file's class; left unnamed, the benchmark that recognises the file. Bad names and unknown
files are one clear error."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from lme_bench.benchmarks import registry
from lme_bench.benchmarks.protocol import Benchmark
from lme_bench.benchmarks.registry import (
    BenchmarkError,
    detect_benchmark,
    load_benchmark,
    resolve_benchmark,
)
from lme_bench.config.settings import DatasetSettings
from lme_bench.dataset.errors import DatasetError
from tests.benchmarks.datasets import DATASETS

PLUGIN = '''
from pathlib import Path

from lme_bench.benchmarks.protocol import Build, BuildSession, BuildTurn, Gold, Question, Scoring


class Notes:
    """One build per `.notes` file: each line a user turn of one session."""

    name = "notes"
    scoring = Scoring(official_scorers=("exact match",), headline=("accuracy",), module=__name__)

    def detect(self, path):
        return Path(path).suffix == ".notes"

    def validate(self, path):
        list(self.builds(path))

    def builds(self, path):
        lines = Path(path).read_text().splitlines()
        turns = tuple(BuildTurn(i, "user", line) for i, line in enumerate(lines))
        yield Build(Path(path).stem, (BuildSession("s000", "2024-01-01", turns),))

    def questions(self, path):
        question = Question("n1", Path(path).stem, "recall", "What did I note first?")
        yield question, Gold("n1", answers=("milk",))


class NotABenchmark:
    name = "nothing"
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "notes_benchmark.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(folder))
    notes = tmp_path / "shopping.notes"
    notes.write_text("milk\neggs\n")
    return notes


def _register(monkeypatch: pytest.MonkeyPatch, **points: str) -> None:
    found = [EntryPoint(name, value, registry.ENTRY_POINT_GROUP) for name, value in points.items()]
    monkeypatch.setattr(
        registry, "entry_points", lambda group: found if group == registry.ENTRY_POINT_GROUP else []
    )


@pytest.mark.parametrize("name", ["longmemeval", "locomo", "beam"])
def test_built_ins_by_name(name: str) -> None:
    benchmark = load_benchmark(name)
    assert isinstance(benchmark, Benchmark) and benchmark.name == name


def test_a_class_by_module_and_by_file_path(plugin: Path) -> None:
    by_module = load_benchmark("notes_benchmark:Notes")
    by_path = load_benchmark(f"{plugin.parent / 'plugins' / 'notes_benchmark.py'}:Notes")
    for benchmark in (by_module, by_path):
        assert isinstance(benchmark, Benchmark) and benchmark.detect(plugin)
        (build,) = benchmark.builds(plugin)
        assert [t.content for t in build.sessions[0].turns] == ["milk", "eggs"]


def test_an_entry_point_by_name_and_in_detection(
    plugin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(monkeypatch, notes="notes_benchmark:Notes")
    assert load_benchmark("notes").name == "notes"
    assert detect_benchmark(plugin).name == "notes"  # after the built-ins, which do not know it
    assert DatasetSettings(benchmark="notes").benchmark == "notes"


def test_unset_the_file_decides(tmp_path: Path) -> None:
    for n, (owner, write) in enumerate(DATASETS.values()):
        folder = tmp_path / f"d{n}"
        folder.mkdir()
        assert resolve_benchmark(None, write(folder)).name == owner
    assert resolve_benchmark("locomo", tmp_path).name == "locomo"  # a name is taken as given


def test_an_unknown_name_suggests_the_nearest() -> None:
    with pytest.raises(
        BenchmarkError, match=r"unknown benchmark 'locomoo'; did you mean 'locomo'\?"
    ):
        load_benchmark("locomoo")
    with pytest.raises(
        ValueError, match=r"did you mean 'longmemeval'\?.*known: longmemeval, locomo, beam"
    ):
        DatasetSettings(benchmark="longmemevl")


def test_classes_that_are_not_benchmarks_or_do_not_import(plugin: Path) -> None:
    with pytest.raises(BenchmarkError, match=r"is not a benchmark .*lacks scoring, detect"):
        load_benchmark("notes_benchmark:NotABenchmark")
    with pytest.raises(BenchmarkError, match="has no class 'Missing'"):
        load_benchmark("notes_benchmark:Missing")
    with pytest.raises(
        BenchmarkError, match=r"cannot import 'no_such_benchmark_module'.*PYTHONPATH"
    ):
        load_benchmark("no_such_benchmark_module:Thing")


def test_a_file_no_benchmark_recognises_is_one_error_naming_it(tmp_path: Path) -> None:
    odd = tmp_path / "notes.csv"
    odd.write_text("a,b\n")
    with pytest.raises(DatasetError) as caught:
        detect_benchmark(odd)
    message = str(caught.value)
    assert message.startswith(f"{odd}: no known benchmark recognises it")
    assert "known: longmemeval, locomo, beam" in message and "[dataset] benchmark" in message
    with pytest.raises(DatasetError, match="no such file or folder"):
        detect_benchmark(tmp_path / "missing.json")
