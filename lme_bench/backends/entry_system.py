"""Mycelian-shaped memories (vaults, entries, context documents) as a `MemorySystem`.

The built-in `embedded` store and `mcp` servers with Mycelian's tool surface both speak the
EntryMemory protocol; this adapter gives them the memory-system protocol, and their entries
capability (`entries`: the store's memories in the configured vault, by memory id) for the
memory agent's `agentic` and `context-only` modes. The vault is the backend's own business:
`[memory.params] vault`, else one per host. Raw sessions become one entry per non-empty turn,
tagged with the opaque session key and the turn index, so hits carry their provenance exactly.

Like a plug-in, each is built from its checked `[memory.params]` and the `BackendEnv` alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from lme_bench.backends.builtin_params import (
    STORE_FILE,
    EmbeddedParams,
    McpParams,
    builtin_params,
    memory_path,
)
from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Usage,
)
from lme_bench.backends.vaults import vault_title
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.embeddings import embedding_counts, load_embedder
from lme_bench.entries.capability import VaultEntries
from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.entries.models import EntryHit, NewEntry

SUMMARY_LIMIT = 512  # Mycelian's entry summary limit, in characters


def entry_summary(text: str) -> str:
    """`text` cut to Mycelian's summary limit, marked with an ellipsis when cut."""
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


def open_embedded(
    params: EmbeddedParams, path: Path, embedder: Callable[[], Any] | None
) -> EmbeddedEntryStore:
    """The embedded store at `path`; dense and hybrid search embed with `embedder()` (the
    `[memory] embedding_model`, loaded at the first search)."""
    model = None
    if params.search != "bm25":
        if embedder is None:
            raise ConfigError(
                f"backend 'embedded': [memory.params] search = {params.search!r} embeds, and"
                " its BackendEnv gives no embedder (env.embedder)"
            )
        model = embedder()
    return EmbeddedEntryStore(path, search=params.search, alpha=params.alpha, embedder=model)


def embedded_store_path(params: EmbeddedParams, env: BackendEnv) -> Path:
    """`[memory.params] path`, else <results_dir>/memory.sqlite: the results folder holds the
    backends' data folders (`env.data_dir` is `<results_dir>/backends/embedded`)."""
    if params.path is not None:
        return params.path
    backends = env.data_dir.parent
    if backends.name != "backends":
        raise ConfigError(
            f"backend 'embedded': [memory.params] path is not set, and its data folder"
            f" {env.data_dir} is not a results folder's backends/<name>: set [memory.params]"
            " path (the store's SQLite file)"
        )
    return backends.parent / STORE_FILE


def open_mcp(params: McpParams) -> EntryMemory:
    from lme_bench.backends.mycelian_mcp import McpEntryStore  # imports the MCP client stack

    return McpEntryStore(params)


def open_entry_store(settings: Settings) -> EntryMemory:
    """The store of the built-in Mycelian-shaped backend the settings name (vaults and all)."""
    params = builtin_params(settings)  # a ConfigError naming a bad [memory.params] key
    if isinstance(params, EmbeddedParams):
        model = settings.memory.embedding_model
        return open_embedded(params, memory_path(settings), lambda: load_embedder(model))
    if isinstance(params, McpParams):
        return open_mcp(params)
    raise ConfigError(f"[memory] backend = {settings.memory.backend!r} has no entry store")


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
    """Base of the two built-ins; a subclass opens its EntryMemory store in `_open`."""

    Params: ClassVar[type[BackendParams]] = BackendParams
    name: ClassVar[str] = "entry-memory"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE, Capability.ENTRIES}
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        if not isinstance(params, self.Params):  # never its defaults in place of what was set
            raise TypeError(
                f"backend {self.name!r} is built from its checked [memory.params] (a"
                f" {self.Params.__name__}), not a {type(params).__name__}"
            )
        self.params = params
        self.env = env
        self.store: EntryMemory = self._open()
        self.entries = VaultEntries(self.store, vault_title(self._vault()))

    def _vault(self) -> str | None:
        raise NotImplementedError

    def _open(self) -> EntryMemory:
        raise NotImplementedError

    async def open_memory(self, title: str) -> str:
        return await self.entries.open_memory(title)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        await self.entries.await_consistency(memory_id)
        held = {
            (tags.get("session_key"), tags.get("turn_index"))
            for tags in await self.entries.entry_tags(memory_id)
        }
        entries = [
            e
            for e in turn_entries(session)
            if (e.tags["session_key"], e.tags["turn_index"]) not in held
        ]
        if entries:
            await self.entries.add_entries(memory_id, entries)

    async def wait_until_ready(self, memory_id: str) -> None:
        await self.entries.await_consistency(memory_id)

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        found = await self.entries.search(memory_id, query, top_ke=k, top_kc=0)
        return [entry_hit(hit) for hit in found.entries[:k]]

    async def delete_memory(self, memory_id: str) -> None:
        raise NotImplementedError(f"{self.name}: Mycelian's tool surface has no delete")

    def usage(self) -> Usage:
        # No model calls; the embedded store's embeddings (dense, hybrid: rows and queries).
        searcher = getattr(getattr(self.store, "store", None), "searcher", None)
        counts = embedding_counts(getattr(searcher, "embedder", None))
        return Usage(embedding_calls=counts.calls, embedded_texts=counts.texts)

    async def close(self) -> None:
        await self.store.close()


class EmbeddedSystem(EntryMemorySystem):
    """lme-bench's own reference memory system, in process ([memory.params]: EmbeddedParams)."""

    Params = EmbeddedParams
    name = "embedded"

    def _open(self) -> EntryMemory:
        assert isinstance(self.params, EmbeddedParams)
        path = embedded_store_path(self.params, self.env)
        return open_embedded(self.params, path, self.env.embedder)

    def _vault(self) -> str | None:
        assert isinstance(self.params, EmbeddedParams)
        return self.params.vault


class McpSystem(EntryMemorySystem):
    """A server with Mycelian's MCP tool surface ([memory.params]: McpParams)."""

    Params = McpParams
    name = "mcp"

    def _open(self) -> EntryMemory:
        assert isinstance(self.params, McpParams)
        return open_mcp(self.params)

    def _vault(self) -> str | None:
        assert isinstance(self.params, McpParams)
        return self.params.vault
