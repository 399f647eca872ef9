"""`[memory] path / search / alpha / vault` and `[memory.mcp]`: the spellings from before the
built-in backends took their parameters in `[memory.params]`, as plugins do.

They still work: each is moved into `params` for the backend that takes it, with one
deprecation message naming the new spelling. A key given in both spellings, or with a value
to a backend that does not take it, is an error. A key at its old default moves nothing (it
was the backend's default anyway), so a recorded run's settings replay unchanged.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from typing import Any

from lme_bench.config.mcp_section import McpSettings


class ConfigDeprecationWarning(DeprecationWarning):
    """An old spelling of a config key, still read; the message gives the new one."""


OLD_DEFAULTS: dict[str, Any] = {"path": None, "search": "bm25", "alpha": 0.6, "vault": None}
MCP_DEFAULTS: dict[str, Any] = McpSettings().model_dump(mode="json")
# Each old key with the backends whose [memory.params] take it.
TAKEN_BY: dict[str, tuple[str, ...]] = {
    "path": ("embedded",),
    "search": ("embedded",),
    "alpha": ("embedded",),
    "vault": ("embedded", "mcp"),
    "mcp": ("mcp",),
}


def move_legacy_keys(memory: Mapping[str, Any], *, announce: bool = True) -> dict[str, Any]:
    """The `[memory]` table `memory` with its old keys moved into `params`; a ValueError for
    a key given in both spellings or to a backend that does not take it. `announce`: warn
    (ConfigDeprecationWarning) once per old key."""
    moved = dict(memory)
    old_keys = [key for key in TAKEN_BY if key in moved]
    if not old_keys:
        return moved
    backend = str(moved.get("backend") or "embedded")
    params = moved.get("params") or {}
    if not isinstance(params, Mapping):
        return moved  # the params field reports its own type error
    params = dict(params)
    for key in old_keys:
        entries = _entries(key, moved.pop(key))
        for name in entries:
            if name in params:
                raise ValueError(
                    f"{_old_spelling(key, name)} and [memory.params] {name} are one setting"
                    f" given twice: keep [memory.params] {name} only"
                )
        changed = {
            name: value for name, value in entries.items() if not _at_default(key, name, value)
        }
        if changed and backend not in TAKEN_BY[key]:
            raise ValueError(_not_taken(key, changed, backend))
        params |= changed
        if announce:  # the new spelling of what it sets (of all of it, when all is a default)
            shown = changed or entries
            warnings.warn(_deprecation(key, shown, backend), ConfigDeprecationWarning, stacklevel=2)
    moved["params"] = params
    return moved


def _entries(key: str, value: Any) -> dict[str, Any]:
    """The [memory.params] keys an old key becomes: itself, or each key of [memory.mcp]."""
    if key != "mcp":
        return {key: value}
    if not isinstance(value, Mapping):
        raise ValueError(f"[memory.mcp] must be a table, not {value!r}")
    return dict(value)


def _at_default(key: str, name: str, value: Any) -> bool:
    default = MCP_DEFAULTS.get(name, ...) if key == "mcp" else OLD_DEFAULTS[key]
    if value == default:
        return True
    if isinstance(default, float) and isinstance(value, str):  # from the environment
        try:
            return float(value) == default
        except ValueError:
            return False
    return False


def _old_spelling(key: str, name: str) -> str:
    return f"[memory.mcp] {name}" if key == "mcp" else f"[memory] {key}"


def _toml(value: Any) -> str:
    """`value` as TOML writes it (inline tables for mappings)."""
    if isinstance(value, Mapping):
        inner = ", ".join(f"{k} = {_toml(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _from_environment(key: str) -> str | None:
    """The LME_* variable that gave the old key, if one did."""
    name = f"LME_MEMORY__{key.upper()}"
    for variable in os.environ:
        if variable.upper() == name or variable.upper().startswith(name + "__"):
            return variable
    return None


def _deprecation(key: str, entries: dict[str, Any], backend: str) -> str:
    variable = _from_environment(key)
    if backend not in TAKEN_BY[key]:
        where = f"environment {variable}" if variable else _old_spelling(key, "").rstrip()
        return f"{where} is deprecated, and backend {backend!r} does not use it: remove it"
    if variable:
        new = f"LME_MEMORY__PARAMS__{key.upper()}" if key != "mcp" else "LME_MEMORY__PARAMS__<KEY>"
        return f"environment {variable} is deprecated; set {new} instead"
    written = ", ".join(
        f"{name} = {_toml(value)}" for name, value in entries.items() if value is not None
    )
    if key == "mcp":
        return f"[memory.mcp] is deprecated; write its keys in [memory.params]: {written}"
    return f"[memory] {key} is deprecated; write it as [memory.params] {written or key + ' = …'}"


def _not_taken(key: str, changed: dict[str, Any], backend: str) -> str:
    name, value = next(iter(changed.items()))
    takers = " and ".join(repr(b) for b in TAKEN_BY[key])
    problem = (
        f"{_old_spelling(key, name)} = {_toml(value)} is a parameter of backend {takers}"
        f" ([memory.params] {name}); backend {backend!r} does not take it"
    )
    if key == "path":
        problem += (
            f" (its files go under <[run] results_dir>/backends/{backend}:"
            " set [run] results_dir to move them)"
        )
    return problem
