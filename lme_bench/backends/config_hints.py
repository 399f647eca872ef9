"""What to do about a backend the config names but lme-bench cannot use: the nearest valid
`[memory.params]` key for a misspelt one, and where to look when a module does not import."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


def params_problems(model: type[BaseModel], error: ValidationError) -> list[str]:
    """One line per problem, `[memory.params] key: message`; an unknown key gets the nearest
    valid one (`did you mean 'batch_size'?`) and the list of valid keys."""
    valid = list(model.model_fields)
    problems = []
    for found in error.errors():
        key = ".".join(str(part) for part in found["loc"]) or "(all)"
        line = f"[memory.params] {key}: {found['msg']}"
        if found["type"] == "extra_forbidden":
            line += _unknown_key_hint(str(found["loc"][-1]), valid)
        problems.append(line)
    return problems


def _unknown_key_hint(key: str, valid: list[str]) -> str:
    if not valid:
        return " (this backend takes no parameters)"
    near = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    guess = f"; did you mean {near[0]!r}?" if near else ""
    return f"{guess} (valid keys: {', '.join(valid)})"


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
