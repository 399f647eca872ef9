"""The `[memory.params]` of the two Mycelian-shaped built-ins, `embedded` and `mcp`, and the
settings read from them: the embedded store's file, its search.

Like a plugin's, these are checked by the backend's own `Params`, through the one parameter
path every backend's go through (`checked_params`, which checks a table once per process and
hands out the same frozen instance after); the readers elsewhere (cache keys, fingerprints, the
backends' data folder) take them from here, never from the raw table.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, ValidationError, model_validator

from lme_bench.backends.config_hints import params_problems
from lme_bench.backends.protocol import BackendParams
from lme_bench.config.legacy_memory_keys import move_legacy_keys
from lme_bench.config.settings import ConfigError, McpSettings, Settings

_VAULT = Field(
    default=None, description="vault title; default: one vault per host, lme-bench-<host>"
)
P = TypeVar("P", bound=BackendParams)
STORE_FILE = "memory.sqlite"  # the embedded store's file in the results folder, by default


class EmbeddedParams(BackendParams):
    """lme-bench's own store, in process: its SQLite file, how it ranks, the vault."""

    path: Path | None = Field(
        default=None, description="SQLite file; default <results_dir>/memory.sqlite"
    )
    search: Literal["bm25", "dense", "hybrid"] = Field(
        default="bm25",
        description="BM25, dense vectors ([memory] embedding_model), or both blended",
    )
    alpha: float = Field(
        default=0.6, ge=0.0, le=1.0, description="hybrid: weight of the dense score (Mycelian 0.6)"
    )
    vault: str | None = _VAULT


class McpParams(McpSettings, BackendParams):
    """How to reach a server with Mycelian's MCP tools, and the vault."""

    vault: str | None = _VAULT

    @model_validator(mode="after")
    def _server_named(self) -> McpParams:
        if self.transport == "streamable_http" and not self.url:
            raise ValueError(
                "backend = 'mcp' over streamable_http needs [memory.params] url,"
                " e.g. http://127.0.0.1:11546/mcp"
            )
        if self.transport == "stdio" and not self.command:
            raise ValueError("backend = 'mcp' over stdio needs [memory.params] command (and args)")
        return self


BUILT_IN_PARAMS: dict[str, type[EmbeddedParams | McpParams]] = {
    "embedded": EmbeddedParams,
    "mcp": McpParams,
}


_CHECKED: dict[tuple[type[BackendParams], str], BackendParams] = {}
_CHECKED_MAX = 256  # distinct tables kept (a process sees a handful; a test suite more)
_checked_lock = threading.Lock()


def _table_key(params: Mapping[str, Any]) -> str:
    """The table as text, each value's type kept (a date and its text are not one value)."""
    return json.dumps(params, sort_keys=True, default=lambda v: f"{type(v).__name__}:{v}")


def checked_params(model: type[P], backend: str, params: Mapping[str, Any]) -> P:
    """`params` validated by `model` (a backend's `Params`), once per process for a given
    table: the checked instance is frozen, so every reader shares it. A ConfigError naming
    each bad key."""
    key = (model, _table_key(params))
    with _checked_lock:
        found = _CHECKED.get(key)
    if found is not None:
        assert isinstance(found, model)
        return found
    try:
        checked = model.model_validate(params)
    except ValidationError as error:
        problems = params_problems(model, error)
        raise ConfigError(f"backend {backend!r}: " + "; ".join(problems)) from None
    with _checked_lock:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = checked
    return checked


def builtin_params(settings: Settings) -> EmbeddedParams | McpParams | None:
    """The checked `[memory.params]` of the configured backend when it is `embedded` or `mcp`
    (the instance the backend is built with: checked_params); None for any other backend."""
    backend = settings.memory.backend
    model = BUILT_IN_PARAMS.get(backend)
    return None if model is None else checked_params(model, backend, settings.memory.params)


def embedded_params(settings: Settings) -> EmbeddedParams | None:
    params = builtin_params(settings)
    return params if isinstance(params, EmbeddedParams) else None


def default_memory_path(settings: Settings) -> Path:
    """The embedded store's file when `path` is not set (entry_system.embedded_store_path
    finds it from the backend's data folder, as a built-in backend gets no settings)."""
    return settings.run.results_dir / STORE_FILE


def memory_path(settings: Settings) -> Path:
    """The embedded store's file; for any backend, its parent holds the backends' data folders
    (`backends/<name>`): <results_dir>, unless the embedded store's `path` is set elsewhere."""
    params = embedded_params(settings)
    return (params.path if params else None) or default_memory_path(settings)


def search_params(settings: Settings) -> EmbeddedParams:
    """The embedded store's search settings; another backend ranks with its own search, and
    the defaults stand in for it (cache keys hash them for every backend)."""
    return embedded_params(settings) or EmbeddedParams()


def comparable_memory(memory: Mapping[str, Any]) -> dict[str, Any]:
    """A `[memory]` table (settings as data) as two runs' settings compare: old spellings moved
    into `params`, and a built-in's params as its Params read them, defaults left out (a key
    written at its default is the same setting as one left out). Left as it is where it does
    not validate: every differing key then shows."""
    try:
        moved = move_legacy_keys(memory, announce=False)
    except ValueError:
        return dict(memory)
    model = BUILT_IN_PARAMS.get(str(moved.get("backend") or "embedded"))
    params = moved.get("params")
    if model is None or not isinstance(params, Mapping):
        return moved
    try:
        checked = model.model_validate(params)
    except ValidationError:
        return moved
    return moved | {"params": checked.model_dump(mode="json", exclude_defaults=True)}
