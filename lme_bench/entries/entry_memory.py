"""EntryMemory: Mycelian's tool surface (vaults, memories, entries, context documents) as an
async protocol: the stores behind the `embedded` and `mcp` backends (the in-process store, MCP
servers with Mycelian's tools) speak it. Vaults are their own business: the stages see a
memory system (lme_bench.backends.protocol.MemorySystem) and, with Capability.ENTRIES, its
`Entries` (capability.py), one vault of such a store bound behind it (`VaultEntries`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from lme_bench.entries.models import Entry, NewEntry, SearchResult


class EntryMemory(Protocol):
    """Async, so one protocol covers in-process stores and MCP servers alike."""

    name: str

    async def get_or_create_vault(self, title: str, description: str = "") -> str: ...

    async def get_or_create_memory(
        self, vault_id: str, title: str, memory_type: str = "CHAT", description: str = ""
    ) -> str: ...

    async def add_entries(
        self, vault_id: str, memory_id: str, entries: Sequence[NewEntry]
    ) -> None: ...

    async def put_context(self, vault_id: str, memory_id: str, content: str) -> None: ...

    async def await_consistency(self, memory_id: str) -> None: ...

    async def get_context(self, vault_id: str, memory_id: str) -> str | None:
        """The latest context document, or None when the memory has none yet."""
        ...

    async def recent_entries(self, vault_id: str, memory_id: str, limit: int) -> list[Entry]:
        """Up to `limit` newest entries, oldest first."""
        ...

    async def default_prompts(self, memory_type: str = "chat") -> dict[str, Any] | None:
        """The memory system's own agent prompts (Mycelian's shape), or None if it has none."""
        ...

    async def count_entries(self, memory_id: str) -> int: ...

    async def entry_tags(self, vault_id: str, memory_id: str) -> list[dict[str, str]]:
        """The tags of every entry the memory holds (what a resumed ingestion checks)."""
        ...

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult: ...

    async def close(self) -> None: ...
