"""The hint a backend that does not import gets, for each way of naming it: a file path or a
module whose own import needs a missing package, a file path without `.py`, a dotted name
without the colon before the class."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.backends.registry import backend_class
from lme_bench.config.settings import ConfigError, Settings

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
