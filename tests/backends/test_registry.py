"""Finding a backend: built-in names, 'module:Class', 'file.py:Class', the entry-point group;
bad names and parameters are one ConfigError naming what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lme_bench.backends.entry_system import EmbeddedSystem
from lme_bench.backends.registry import (
    backend_class,
    backend_data_dir,
    backend_params,
    backend_source_digest,
)
from lme_bench.config.backend_names import ENTRY_POINT_GROUP
from lme_bench.config.settings import ConfigError, Settings

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "example_backend.py"


def test_a_backend_by_name_module_file_and_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert backend_class("embedded") is EmbeddedSystem
    assert backend_class("lme_bench.backends.entry_system:McpSystem").name == "mcp"
    by_file = backend_class(f"{EXAMPLE}:SessionNotes")
    assert by_file.name == "session-notes"
    assert backend_class(f"{EXAMPLE}:SessionNotes") is by_file  # the file is loaded once

    # an installed package registering a backend under the entry-point group
    (tmp_path / "notes_plugin.py").write_text(EXAMPLE.read_text())
    dist = tmp_path / "notes_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: notes-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nnotes = notes_plugin:SessionNotes\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert backend_class("notes").name == "session-notes"
    assert Settings(memory={"backend": "notes"}).memory.backend == "notes"
    sys.modules.pop("notes_plugin", None)


def test_bad_names_and_parameters_are_one_error_naming_them(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown backend 'cloud'"):
        Settings(memory={"backend": "cloud"})
    with pytest.raises(ConfigError, match="cannot import 'no_such_module'"):
        backend_class("no_such_module:Thing")
    with pytest.raises(ConfigError, match="has no class 'Missing'"):
        backend_class(f"{EXAMPLE}:Missing")
    not_a_backend = tmp_path / "plain.py"
    not_a_backend.write_text("class Plain:\n    pass\n")
    with pytest.raises(ConfigError, match="is not a memory backend"):
        backend_class(f"{not_a_backend}:Plain")
    notes = backend_class(f"{EXAMPLE}:SessionNotes")
    with pytest.raises(ConfigError, match=r"\[memory.params\] min_wrd: Extra inputs"):
        backend_params(notes, {"min_wrd": 3})
    with pytest.raises(ConfigError, match=r"\[memory.params\] min_word: Input should be"):
        backend_params(notes, {"min_word": 0})


def test_the_backends_source_is_part_of_what_an_ingestion_depends_on(tmp_path: Path) -> None:
    backend = tmp_path / "mine.py"
    backend.write_text(EXAMPLE.read_text())
    before = backend_source_digest(f"{backend}:SessionNotes")
    assert before == backend_source_digest(f"{backend}:SessionNotes")
    assert len(before) == 64 and before != backend_source_digest("embedded")
    backend.write_text(EXAMPLE.read_text() + "\n# ranks differently now\n")
    assert backend_source_digest(f"{backend}:SessionNotes") != before


def test_a_misspelt_parameter_gets_the_nearest_key_and_the_valid_ones() -> None:
    notes = backend_class(f"{EXAMPLE}:SessionNotes")
    with pytest.raises(ConfigError) as raised:
        backend_params(notes, {"min_wrod": 3})
    assert str(raised.value) == (
        "backend 'session-notes': [memory.params] min_wrod: Extra inputs are not permitted;"
        " did you mean 'min_word'? (valid keys: min_word)"
    )
    with pytest.raises(ConfigError, match=r"zebra: Extra inputs are not permitted \(valid keys"):
        backend_params(notes, {"zebra": 1})


def test_a_module_that_does_not_import_gets_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chroma_backend.py").write_text(EXAMPLE.read_text())
    monkeypatch.chdir(tmp_path.parent)  # the file's folder is not on the path
    with pytest.raises(ConfigError) as raised:
        backend_class("chroma_backend:SessionNotes")
    assert "Is the folder holding 'chroma_backend' on PYTHONPATH" in str(raised.value)
    assert "'path/to/chroma_backend.py:SessionNotes'" in str(raised.value)
    monkeypatch.chdir(tmp_path)  # run from the file's folder, which is still not on the path
    with pytest.raises(ConfigError) as raised:
        backend_class("chroma_backend:SessionNotes")
    assert "chroma_backend.py is in the current folder, which is not on the import path" in str(
        raised.value
    )
    assert "('chroma_backend.py:SessionNotes')" in str(raised.value)
    # a module that is found but imports a package that is not installed
    (tmp_path / "needs_chroma.py").write_text("import chromadb_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as raised:
        backend_class("needs_chroma:Thing")
    assert "imports 'chromadb_not_installed', which is not installed" in str(raised.value)
    assert "pip install -c constraints.txt chromadb_not_installed" in str(raised.value)
    sys.modules.pop("needs_chroma", None)


def test_a_backend_keeps_one_folder_however_the_config_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chroma_backend.py").write_text(EXAMPLE.read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)

    def folder(backend: str) -> Path:
        return backend_data_dir(Settings(memory={"backend": backend}, run={"results_dir": "r"}))

    by_module = folder("chroma_backend:SessionNotes")
    assert folder("chroma_backend.py:SessionNotes") == by_module
    assert folder(f"{tmp_path}/chroma_backend.py:SessionNotes") == by_module
    assert by_module.parent == Path("r") / "backends"
    assert by_module.name.startswith("session-notes-chroma_backend-")
    # the same file elsewhere is another backend; built-ins keep the folders they had
    assert folder(f"{EXAMPLE}:SessionNotes") != by_module
    assert folder("embedded").name == "embedded"
    assert folder("lme_bench.backends.entry_system:EmbeddedSystem").name == "embedded"
    sys.modules.pop("chroma_backend", None)
