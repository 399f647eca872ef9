"""The entries capability: a memory's entries and context document, reached by memory id alone.

What a memory system offers for Capability.ENTRIES (its `entries`): the surface the memory agent
writes to in the `agentic` and `context-only` ingestion modes, and which keeps context
documents. Vaults are not part of it: a store that keeps memories in vaults (EntryMemory,
Mycelian's tool surface) binds one vault behind it (`VaultEntries`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.entries.models import Entry, NewEntry, SearchResult


class Entries(Protocol):
    """The entries and context documents of a system's memories, by memory id."""

    async def add_entries(self, memory_id: str, entries: Sequence[NewEntry]) -> None:
        """Store the entries, in order (their creation times follow the conversation)."""
        ...

    async def put_context(self, memory_id: str, content: str) -> None:
        """Store a new context document (the latest one is what `get_context` returns)."""
        ...

    async def get_context(self, memory_id: str) -> str | None:
        """The latest context document, or None when the memory has none yet."""
        ...

    async def recent_entries(self, memory_id: str, limit: int) -> list[Entry]:
        """Up to `limit` newest entries, oldest first."""
        ...

    async def entry_tags(self, memory_id: str) -> list[dict[str, str]]:
        """The tags of every entry the memory holds (what a resumed ingestion checks)."""
        ...

    async def count_entries(self, memory_id: str) -> int:
        """How many entries the memory holds."""
        ...

    async def await_consistency(self, memory_id: str) -> None:
        """Return once every write so far is stored and searchable."""
        ...

    async def default_prompts(self, memory_type: str = "chat") -> dict[str, Any] | None:
        """The memory system's own agent prompts (Mycelian's shape), or None if it has none."""
        ...

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult:
        """Up to `top_ke` entries and `top_kc` context documents, best first."""
        ...


class VaultEntries:
    """An EntryMemory's memories in one vault (found or created by its title at first use) as
    `Entries`; it opens the vault's memories too."""

    def __init__(self, store: EntryMemory, vault_title: str) -> None:
        self.store = store
        self.vault_title = vault_title
        self._vault_id: str | None = None

    async def vault_id(self) -> str:
        if self._vault_id is None:
            self._vault_id = await self.store.get_or_create_vault(self.vault_title)
        return self._vault_id

    async def open_memory(self, title: str) -> str:
        return await self.store.get_or_create_memory(await self.vault_id(), title)

    async def add_entries(self, memory_id: str, entries: Sequence[NewEntry]) -> None:
        await self.store.add_entries(await self.vault_id(), memory_id, entries)

    async def put_context(self, memory_id: str, content: str) -> None:
        await self.store.put_context(await self.vault_id(), memory_id, content)

    async def get_context(self, memory_id: str) -> str | None:
        return await self.store.get_context(await self.vault_id(), memory_id)

    async def recent_entries(self, memory_id: str, limit: int) -> list[Entry]:
        return await self.store.recent_entries(await self.vault_id(), memory_id, limit)

    async def entry_tags(self, memory_id: str) -> list[dict[str, str]]:
        return await self.store.entry_tags(await self.vault_id(), memory_id)

    async def count_entries(self, memory_id: str) -> int:
        return await self.store.count_entries(memory_id)

    async def await_consistency(self, memory_id: str) -> None:
        await self.store.await_consistency(memory_id)

    async def default_prompts(self, memory_type: str = "chat") -> dict[str, Any] | None:
        return await self.store.default_prompts(memory_type)

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult:
        return await self.store.search(memory_id, query, top_ke=top_ke, top_kc=top_kc)
