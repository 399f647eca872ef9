"""Mycelian-shaped memories (vaults, entries, context documents) as a `MemorySystem`.

The built-in `embedded` store and `mcp` servers with Mycelian's tool surface both speak the
EntryMemory protocol; this adapter gives them the memory-system protocol as well, and keeps the
entry surface at hand (`entry_memory`) for the memory agent's `agentic` and `context-only`
modes. Raw sessions become one entry per non-empty turn, tagged with the opaque session key
and the turn index, so hits carry their provenance exactly.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable
from typing import ClassVar

from lme_bench.backends.builtin_params import (
    EmbeddedParams,
    McpParams,
    builtin_params,
    default_memory_path,
)
from lme_bench.backends.embedded import EmbeddedBackend
from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Usage,
)
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.embeddings import embedding_counts, load_embedder
from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.entries.models import EntryHit, NewEntry

SUMMARY_LIMIT = 512  # Mycelian's entry summary limit, in characters


def entry_summary(text: str) -> str:
    """`text` cut to Mycelian's summary limit, marked with an ellipsis when cut."""
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


def vault_title(vault: str | None) -> str:
    """`vault`, or one vault per host (Mycelian titles: ≤ 50 chars, lowercase letters, digits
    and hyphens)."""
    if vault:
        return vault
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-") or "host"
    return f"lme-bench-{host}"[:50].rstrip("-")


def open_embedded(params: EmbeddedParams, settings: Settings) -> EmbeddedBackend:
    """The embedded store at `params.path` (default <results_dir>/memory.sqlite); dense and
    hybrid search embed with `[memory] embedding_model`, loaded at the first search."""
    model = settings.memory.embedding_model
    embedder = load_embedder(model) if params.search != "bm25" else None
    path = params.path or default_memory_path(settings)
    return EmbeddedBackend(path, search=params.search, alpha=params.alpha, embedder=embedder)


def open_mcp(params: McpParams) -> EntryMemory:
    from lme_bench.backends.mycelian_mcp import McpBackend  # imports the MCP client stack

    return McpBackend(params)


def open_backend(settings: Settings) -> EntryMemory:
    """The entry surface of the built-in Mycelian-shaped backend the settings name."""
    params = builtin_params(settings)  # a ConfigError naming a bad [memory.params] key
    if isinstance(params, EmbeddedParams):
        return open_embedded(params, settings)
    if isinstance(params, McpParams):
        return open_mcp(params)
    raise ConfigError(f"[memory] backend = {settings.memory.backend!r} has no entry surface")


def turn_entries(session: Session) -> list[NewEntry]:
    """One entry per non-empty turn (memory systems refuse an empty summary)."""
    turns = ((turn.index, turn.role, turn.content) for turn in session.turns)
    return tagged_entries(session.key, session.date, turns)


def tagged_entries(
    session_key: str, session_date: str, turns: Iterable[tuple[int, str, str]]
) -> list[NewEntry]:
    """turn_entries of the session's (index, role, content) turns."""
    return [
        NewEntry(
            raw_entry=content,
            summary=entry_summary(content),
            tags={
                "session_key": session_key,
                "turn_index": str(index),
                "role": role,
                "session_date": session_date,
            },
        )
        for index, role, content in turns
        if content.strip()
    ]


def entry_hit(hit: EntryHit) -> Hit:
    index = hit.tags.get("turn_index", "")
    return Hit(
        text=hit.raw_entry or hit.summary,
        score=hit.score,
        date=hit.tags.get("session_date") or hit.creation_time,
        session_key=hit.tags.get("session_key"),
        turn_index=int(index) if index.isdigit() else None,
        role=hit.tags.get("role"),
        id=hit.entry_id,
    )


class EntryMemorySystem:
    """Base of the two built-ins; a subclass opens its EntryMemory in `_open`."""

    Params: ClassVar[type[BackendParams]] = BackendParams
    name: ClassVar[str] = "entry-memory"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE, Capability.ENTRIES}
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        settings = env.extra.get("settings")
        self.settings = settings if isinstance(settings, Settings) else Settings()
        self.params = params
        self.vault_title = vault_title(getattr(params, "vault", None))
        self.entry_memory: EntryMemory = self._open()
        self._vault_id: str | None = None

    def _open(self) -> EntryMemory:
        raise NotImplementedError

    async def vault_id(self) -> str:
        if self._vault_id is None:
            self._vault_id = await self.entry_memory.get_or_create_vault(self.vault_title)
        return self._vault_id

    async def open_memory(self, title: str) -> str:
        return await self.entry_memory.get_or_create_memory(await self.vault_id(), title)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        vault_id = await self.vault_id()
        await self.entry_memory.await_consistency(memory_id)
        held = {
            (tags.get("session_key"), tags.get("turn_index"))
            for tags in await self.entry_memory.entry_tags(vault_id, memory_id)
        }
        entries = [
            e
            for e in turn_entries(session)
            if (e.tags["session_key"], e.tags["turn_index"]) not in held
        ]
        if entries:
            await self.entry_memory.add_entries(vault_id, memory_id, entries)

    async def wait_until_ready(self, memory_id: str) -> None:
        await self.entry_memory.await_consistency(memory_id)

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        found = await self.entry_memory.search(memory_id, query, top_ke=k, top_kc=0)
        return [entry_hit(hit) for hit in found.entries[:k]]

    async def delete_memory(self, memory_id: str) -> None:
        raise NotImplementedError(f"{self.name}: Mycelian's tool surface has no delete")

    def usage(self) -> Usage:
        # No model calls; the embedded store's embeddings (dense, hybrid: rows and queries).
        searcher = getattr(getattr(self.entry_memory, "store", None), "searcher", None)
        counts = embedding_counts(getattr(searcher, "embedder", None))
        return Usage(embedding_calls=counts.calls, embedded_texts=counts.texts)

    async def close(self) -> None:
        await self.entry_memory.close()


class EmbeddedSystem(EntryMemorySystem):
    """lme-bench's own reference memory system, in process ([memory.params]: EmbeddedParams)."""

    Params = EmbeddedParams
    name = "embedded"

    def _open(self) -> EntryMemory:
        assert isinstance(self.params, EmbeddedParams)
        return open_embedded(self.params, self.settings)


class McpSystem(EntryMemorySystem):
    """A server with Mycelian's MCP tool surface ([memory.params]: McpParams)."""

    Params = McpParams
    name = "mcp"

    def _open(self) -> EntryMemory:
        assert isinstance(self.params, McpParams)
        return open_mcp(self.params)
