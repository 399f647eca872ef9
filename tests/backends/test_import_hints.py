"""The hint a backend that does not import gets, for each way of naming it: a file path or a
module whose own import needs a missing package (named by its package or lme-bench's extra,
never by a module path), a file path without `.py` (relative ones too), a dotted name without
the colon before the class."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from lme_bench.backends.registry import backend_class
from lme_bench.benchmarks.registry import BenchmarkError, benchmark_class
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.plugins import EXTRA_MODULES, TORCH_PIN, WITH_TORCH, install_command

ROOT = Path(__file__).resolve().parents[2]

_NEEDS_A_MISSING_PACKAGE = "import lme_bench_no_such_client\n\nclass Memory:\n    pass\n"


def _error(name: str) -> str:
    with pytest.raises(ConfigError) as raised:
        backend_class(name)
    return str(raised.value)


def test_a_missing_package_gets_the_install_hint_by_file_path_and_by_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_backend.py").write_text(_NEEDS_A_MISSING_PACKAGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    install = "`pip install -c constraints.txt lme_bench_no_such_client`"
    assert install in _error(f"{tmp_path / 'broken_backend.py'}:Memory")
    assert install in _error("broken_backend:Memory")


def test_a_file_path_without_py_is_told_to_add_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vecmem").mkdir()
    (tmp_path / "vecmem" / "vecmem_backend.py").write_text("class VecMem:\n    pass\n")
    monkeypatch.chdir(tmp_path)
    error = _error("vecmem/vecmem_backend:VecMem")
    assert "'vecmem/vecmem_backend.py:VecMem'" in error
    assert "PYTHONPATH" not in error


def test_a_name_without_a_colon_is_shown_both_spellings() -> None:
    with pytest.raises(ValueError) as raised:
        Settings(memory={"backend": "vecmem_backend.VecMem"})
    assert "'module:Class'" in str(raised.value)
    assert "'path/to/file.py:Class'" in str(raised.value)


def _backend_file(folder: Path, name: str = "chroma_backend.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    shutil.copy(ROOT / "docs" / "example_backend.py", path)
    return path


def test_x_py_dot_dot_x_and_x_each_load_or_get_the_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _backend_file(tmp_path / "project")
    (tmp_path / "project" / "runs").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    assert backend_class("./chroma_backend.py:SessionNotes").__name__ == "SessionNotes"
    error = _error("./chroma_backend:SessionNotes")  # no TypeError from a relative import
    assert "'./chroma_backend.py:SessionNotes'" in error and "with its `.py`" in error
    module = _error("chroma_backend:SessionNotes")  # a module name: the folder is not on the path
    assert "('chroma_backend.py:SessionNotes')" in module and "PYTHONPATH=." in module
    monkeypatch.chdir(tmp_path / "project" / "runs")
    assert backend_class("../chroma_backend.py:SessionNotes").__name__ == "SessionNotes"
    assert "'../chroma_backend.py:SessionNotes'" in _error("../chroma_backend:SessionNotes")
    missing = _error("../no_such_backend:SessionNotes")
    assert str(tmp_path / "project" / "no_such_backend.py") in missing
    assert str(tmp_path / "project" / "runs") in missing  # where relative paths start


def test_a_plug_in_benchmark_by_a_relative_path_gets_the_same_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_benchmark.py").write_text("class MyBenchmark:\n    pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BenchmarkError) as raised:
        benchmark_class("./my_benchmark:MyBenchmark")
    assert "'./my_benchmark.py:MyBenchmark'" in str(raised.value)


def test_a_built_in_backend_missing_a_module_of_its_extra_is_told_to_install_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.store.sqlite", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "lme_bench.backends.langgraph_store", raising=False)
    monkeypatch.delitem(sys.modules, "lme_bench.backends.langgraph_stores", raising=False)
    error = _error("langgraph")
    assert "`pip install -c constraints.txt 'lme-bench[langgraph]'`" in error
    assert "constraints.txt langgraph.store" not in error  # a module path is no package


def test_a_missing_module_is_installed_by_its_package_or_extra_never_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "kuzu", None)  # as if not installed
    plug_in = tmp_path / "graph_backend.py"
    plug_in.write_text("import kuzu\n")
    torch_first = "`pip install -c constraints.txt torch==2.13.0`, then"
    graphiti = f"{torch_first} `pip install -c constraints.txt 'lme-bench[graphiti]'`"
    assert graphiti in _error(f"{plug_in}:Memory")
    assert install_command("graphiti_core.driver.kuzu_driver") == graphiti
    assert install_command("PIL._no_such_part") == "`pip install -c constraints.txt pillow`"
    assert install_command("chromadb.api") == "`pip install -c constraints.txt chromadb`"


def test_the_extras_named_in_hints_are_pyproject_extras_and_torch_the_makefile_pin() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(EXTRA_MODULES.values()) | {"dev", "all"} == set(extras)
    with_torch = {  # torch itself, or the dense extra through another
        name
        for name, needs in extras.items()
        if any(n.startswith("torch") or n.startswith("lme-bench[dense") for n in needs)
    }
    assert with_torch == WITH_TORCH
    assert f"$(PIP) {TORCH_PIN} " in (ROOT / "Makefile").read_text()  # installed first
