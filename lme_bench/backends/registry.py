"""Find the backend class a config names, check its parameters, and build it.

`[memory] backend` is a built-in name (BUILT_IN), a name some installed package registers
under the `lme_bench.backends` entry-point group, or `"package.module:Class"` for a class in
any importable module (one file in the working directory is enough). `[memory.params]` is
checked by the class's `Params`; each error names the key.
"""

from __future__ import annotations

import importlib
import re
import socket
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from lme_bench.backends.embedded import EmbeddedBackend
from lme_bench.backends.entry_memory import EntryMemory
from lme_bench.backends.protocol import BackendEnv, BackendParams, MemorySystem
from lme_bench.config.settings import ConfigError, MemorySettings, Settings
from lme_bench.reference_memory.embeddings import load_embedder

ENTRY_POINT_GROUP = "lme_bench.backends"
BUILT_IN: dict[str, str] = {
    "embedded": "lme_bench.backends.entry_system:EmbeddedSystem",
    "mcp": "lme_bench.backends.entry_system:McpSystem",
    "mem0": "lme_bench.backends.mem0:Mem0System",
    "langgraph": "lme_bench.backends.langgraph_store:LangGraphSystem",
    "graphiti": "lme_bench.backends.graphiti:GraphitiSystem",
    "mcp-tools": "lme_bench.backends.mcp_tools:McpToolsSystem",
}
_REQUIRED = ("Params", "name", "capabilities")


def _load(target: str, where: str) -> type[MemorySystem]:
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"{where}: cannot import {module_name!r}: {error}") from error
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
    if name in BUILT_IN:
        return _load(BUILT_IN[name], where)
    if ":" in name:
        return _load(name, where)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name == name:
            return _load(point.value, where)
    known = sorted(BUILT_IN) + sorted(p.name for p in entry_points(group=ENTRY_POINT_GROUP))
    raise ConfigError(f"{where}: unknown backend (known: {', '.join(known)}, or 'module:Class')")


def backend_params(cls: type[MemorySystem], params: dict[str, Any]) -> BackendParams:
    try:
        return cls.Params.model_validate(params)
    except ValidationError as error:
        problems = [
            f"[memory.params] {'.'.join(str(part) for part in e['loc']) or '(all)'}: {e['msg']}"
            for e in error.errors()
        ]
        raise ConfigError(f"backend {cls.name!r}: " + "; ".join(problems)) from None


def backend_env(settings: Settings, scope: str = "") -> BackendEnv:
    from lme_bench.providers.memory_model import memory_chat_model  # builds provider clients

    data_dir = settings.memory_path.parent / "backends" / (scope or "unscoped")
    memory = settings.memory
    return BackendEnv(
        data_dir=Path(data_dir),
        scope=scope,
        chat_model=memory_chat_model(settings),
        embedder=lambda: load_embedder(memory.embedding_model),
        extra={"settings": settings},
    )


def open_system(settings: Settings, scope: str = "") -> MemorySystem:
    """The configured memory system, built for one stage of one question."""
    cls = backend_class(settings.memory.backend)
    params = backend_params(cls, settings.memory.params)
    env = backend_env(settings, scope)
    env.data_dir.mkdir(parents=True, exist_ok=True)
    system: MemorySystem = cast(Any, cls)(params, env)
    return system


def open_backend(settings: Settings) -> EntryMemory:
    """The entries-and-context surface of the built-in Mycelian-shaped backends."""
    if settings.memory.backend == "embedded":
        memory = settings.memory  # dense/hybrid: the embedder loads its model at first search
        embedder = load_embedder(memory.embedding_model) if memory.search != "bm25" else None
        return EmbeddedBackend(
            settings.memory_path, search=memory.search, alpha=memory.alpha, embedder=embedder
        )
    if settings.memory.backend == "mcp":
        from lme_bench.backends.mycelian_mcp import McpBackend  # imports the MCP client stack

        return McpBackend(settings.memory.mcp)  # ConfigError without url (http) / command (stdio)
    raise ConfigError(
        f"[memory] backend = {settings.memory.backend!r} has no entries-and-context surface"
    )


def vault_title(settings: MemorySettings) -> str:
    """One vault per host (Mycelian titles: ≤ 50 chars, lowercase letters, digits and hyphens)."""
    if settings.vault:
        return settings.vault
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-") or "host"
    return f"lme-bench-{host}"[:50].rstrip("-")
