"""The backend names a config may give: the built-in ones (each a 'module:Class' the registry
imports only when it builds one), those registered under the entry-point group, and any
'module:Class'. Settings validation checks names here without importing a backend."""

from __future__ import annotations

from importlib.metadata import entry_points

ENTRY_POINT_GROUP = "lme_bench.backends"
BUILT_IN: dict[str, str] = {
    "embedded": "lme_bench.backends.entry_system:EmbeddedSystem",
    "mcp": "lme_bench.backends.entry_system:McpSystem",
    "mem0": "lme_bench.backends.mem0:Mem0System",
    "langgraph": "lme_bench.backends.langgraph_store:LangGraphSystem",
    "graphiti": "lme_bench.backends.graphiti:GraphitiSystem",
    "mcp-tools": "lme_bench.backends.mcp_tools:McpToolsSystem",
}


def registered() -> dict[str, str]:
    """Backends installed packages register: name -> 'module:Class'."""
    return {point.name: point.value for point in entry_points(group=ENTRY_POINT_GROUP)}


def unknown_backend(name: str) -> str | None:
    """Why `name` names no backend, or None when it may (a 'module:Class' is checked on use)."""
    if name in BUILT_IN or ":" in name:
        return None
    plugins = registered()
    if name in plugins:
        return None
    known = [*BUILT_IN, *plugins]
    return (
        f"unknown backend {name!r} (known: {', '.join(known)}; or a class of your own as"
        " 'module:Class' or 'path/to/file.py:Class', with a colon before the class)"
    )
