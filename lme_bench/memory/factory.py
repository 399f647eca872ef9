"""Open the memory backend a config names, and name the vault and memories the harness uses."""

from __future__ import annotations

import re
import socket

from lme_bench.config import MemorySettings, Settings
from lme_bench.memory.base import MemoryBackend
from lme_bench.memory.embedded import EmbeddedBackend
from lme_bench.memory.embeddings import load_embedder


def open_backend(settings: Settings) -> MemoryBackend:
    if settings.memory.backend == "embedded":
        memory = settings.memory  # dense/hybrid: the embedder loads its model at first search
        embedder = load_embedder(memory.embedding_model) if memory.search != "bm25" else None
        return EmbeddedBackend(
            settings.memory_path, search=memory.search, alpha=memory.alpha, embedder=embedder
        )
    if settings.memory.backend == "mcp":
        from lme_bench.memory.mcp_backend import McpBackend  # imports the MCP client stack

        return McpBackend(settings.memory.mcp)  # ConfigError without url (http) / command (stdio)
    raise ValueError(f"[memory] backend: unknown backend {settings.memory.backend!r}")


def vault_title(settings: MemorySettings) -> str:
    """One vault per host (Mycelian titles: ≤ 50 chars, lowercase letters, digits and hyphens)."""
    if settings.vault:
        return settings.vault
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-") or "host"
    return f"lme-bench-{host}"[:50].rstrip("-")
