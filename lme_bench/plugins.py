"""Importing a class a config names by module or file: shared by the registries of memory
backends and of benchmarks, which sit in different layers.

A target is `"package.module:Class"` (any importable module) or `"path/to/file.py:Class"` (one
Python file, a relative path taken from the current folder). Errors are plain `ImportError`s;
each registry words them for its own config key, with `import_hint` for advice.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def import_module_or_file(module_name: str, prefix: str) -> ModuleType:
    """An importable module, or a Python file by its path, registered in `sys.modules` as
    `<prefix><digest of its resolved path>` so one file is loaded once per process."""
    if not module_name.endswith(".py"):
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
    is_file = module_name.endswith(".py")
    if not is_file and (module_name == missing or module_name.startswith(f"{missing}.")):
        return _module_not_found_hint(module_name, attribute)
    return (
        f". {module_name!r} imports {missing!r}, which is not installed in this environment:"
        f" install it with lme-bench's pins kept, e.g. `pip install -c constraints.txt {missing}`"
    )


def _module_not_found_hint(module_name: str, attribute: str) -> str:
    if "/" in module_name or "\\" in module_name:  # a file path written without `.py`
        return f". A file is named with its `.py`: '{module_name}.py:{attribute}'"
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
