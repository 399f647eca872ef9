"""Find the backend class a config names, check its parameters, and build it.

`[memory] backend` is a built-in name (BUILT_IN), a name some installed package registers
under the `lme_bench.backends` entry-point group, `"package.module:Class"` for a class in any
importable module, or `"path/to/file.py:Class"` for a class in one Python file (a relative
path is taken from the current folder). `[memory.params]` is checked by the class's
`Params`; each error names the key. Each backend class keeps its files in a folder of its own
(`storage_key`), the same whichever way the config names the class.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from lme_bench.backends.builtin_params import (
    EmbeddedParams,
    McpParams,
    checked_params,
    memory_path,
)
from lme_bench.backends.extra_params import GraphitiParams, LangGraphParams, Mem0Params
from lme_bench.backends.mcp_tools_params import McpToolsParams
from lme_bench.backends.protocol import BackendEnv, BackendParams, MemorySystem
from lme_bench.common.code_digest import closure_digest
from lme_bench.config.backend_names import BUILT_IN, registered, unknown_backend
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.embeddings import load_embedder
from lme_bench.plugins import import_hint, import_module_or_file

if TYPE_CHECKING:
    from lme_bench.providers.memory_model import MemoryModel

_REQUIRED = ("Params", "name", "capabilities")
_BUILT_IN_PARAMS: dict[str, type[BackendParams]] = {
    "embedded": EmbeddedParams,
    "mcp": McpParams,
    "mem0": Mem0Params,
    "langgraph": LangGraphParams,
    "graphiti": GraphitiParams,
    "mcp-tools": McpToolsParams,
}


def _module(module_name: str, attribute: str, where: str) -> ModuleType:
    """An importable module, or a Python file by its path (relative to the current folder)."""
    try:
        return import_module_or_file(module_name, prefix="lme_bench_backend_")
    except ImportError as error:
        hint = import_hint(module_name, error, attribute)
        raise ConfigError(f"{where}: cannot import {module_name!r}: {error}{hint}") from error


def _load(target: str, where: str) -> type[MemorySystem]:
    module_name, _, attribute = target.rpartition(":")
    module = _module(module_name, attribute, where)
    cls = getattr(module, attribute, None)
    if not isinstance(cls, type):
        raise ConfigError(f"{where}: {module_name!r} has no class {attribute!r}")
    missing = [name for name in _REQUIRED if not hasattr(cls, name)]
    if missing or not issubclass(getattr(cls, "Params", object), BackendParams):
        raise ConfigError(
            f"{where}: {target} is not a memory backend (it needs {', '.join(_REQUIRED)},"
            " with Params a BackendParams subclass; see lme_bench/backends/protocol.py)"
        )
    return cast(type[MemorySystem], cls)


def backend_class(name: str) -> type[MemorySystem]:
    where = f"[memory] backend = {name!r}"
    problem = unknown_backend(name)
    if problem is not None:
        raise ConfigError(f"[memory] backend: {problem}")
    if name in BUILT_IN or ":" in name:  # no scan of the installed packages' entry points
        return _load(BUILT_IN.get(name, name), where)
    return _load(registered().get(name) or name, where)


def params_class(name: str) -> type[BackendParams]:
    """The class that checks `[memory.params]` of backend `name`: a built-in's without importing
    the backend (so on a plain install too, where its extra is missing), any other's from its
    class."""
    return _BUILT_IN_PARAMS.get(name) or backend_class(name).Params


def backend_source_digest(name: str) -> str:
    """A hash of the backend's source (a changed backend ingests anew): a built-in's module and
    every lme_bench module it imports; a plugin's own file."""
    module_name = backend_class(name).__module__
    if module_name.startswith("lme_bench."):
        return closure_digest(module_name)
    source = Path(sys.modules[module_name].__file__ or "")
    return hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""


def backend_params(cls: type[MemorySystem], params: dict[str, Any]) -> BackendParams:
    """`[memory.params]` checked by the class's `Params`, built-in or plug-in alike (once per
    table: builtin_params.checked_params); one ConfigError naming every bad key (an unknown
    one with the nearest valid key and the list of valid ones)."""
    return checked_params(cls.Params, cls.name, params)


def _slug(text: str) -> str:
    return re.sub(r"\W+", "-", text).strip("-") or "backend"


def storage_key(cls: type[MemorySystem]) -> str:
    """The name of a backend's folder under `<results_dir>/backends/`, from its class, however
    the config spells it: a built-in's name as before ("embedded", "mcp-tools"); for any other
    class its `name`, its file's name and a digest of the resolved file and the class's
    qualified name, e.g. "session-notes-example_backend-1f0c2a9d3b"."""
    for name, target in BUILT_IN.items():
        module_name, _, attribute = target.partition(":")
        if cls.__module__ == module_name and cls.__qualname__ == attribute:
            return _slug(name)
    module = sys.modules.get(cls.__module__)
    source = getattr(module, "__file__", None)
    where = str(Path(source).resolve()) if source else cls.__module__
    digest = hashlib.sha256(f"{where}:{cls.__qualname__}".encode()).hexdigest()[:10]
    stem = Path(source).stem if source else cls.__module__.rpartition(".")[2]
    return f"{_slug(cls.name)}-{_slug(stem)}-{digest}"


def backend_data_dir(settings: Settings) -> Path:
    """The configured backend's folder: `<results_dir>/backends/<storage_key>/` (beside the
    embedded store's file when its `path` is set elsewhere)."""
    key = storage_key(backend_class(settings.memory.backend))
    return memory_path(settings).parent / "backends" / key


def backend_env(settings: Settings, data_dir: Path | None = None) -> BackendEnv:
    """What a run gives the configured backend: its folder (`data_dir` in its place when
    given, as the conformance suite does), the `[models] memory` chat model when one is set,
    and a loader of the `[memory] embedding_model` embedder."""
    folder = data_dir if data_dir is not None else backend_data_dir(settings)
    return run_env(settings, folder, memory_model(settings))


def memory_model(settings: Settings) -> MemoryModel | None:
    """The `[models] memory` model, built once; None when the config names none (LangChain is
    imported only for a system that calls a model)."""
    if not settings.models.memory:
        return None
    from lme_bench.providers.memory_model import memory_model as built

    return built(settings)


def run_env(settings: Settings, data_dir: Path, model: MemoryModel | None) -> BackendEnv:
    """What a run gives a backend besides its parameters: its folder, the memory model (a
    wrapper of its own) and a loader of the `[memory] embedding_model` embedder."""
    embedding_model = settings.memory.embedding_model
    where = f"[memory] backend = {settings.memory.backend!r}"
    return BackendEnv(
        data_dir=data_dir,
        scope="",
        chat_model=model.for_one_system() if model is not None else None,
        embedder=lambda: load_embedder(embedding_model, where),
    )


def construct(cls: type[MemorySystem], params: BackendParams, env: BackendEnv) -> MemorySystem:
    """`cls(params, env)` with its folder created: how every backend is built."""
    env.data_dir.mkdir(parents=True, exist_ok=True)
    system: MemorySystem = cast(Any, cls)(params, env)
    return system


def build_backend(cls: type[MemorySystem], params: dict[str, Any], env: BackendEnv) -> MemorySystem:
    """`cls(checked params, env)` with its folder created: how every backend is built."""
    return construct(cls, backend_params(cls, params), env)
