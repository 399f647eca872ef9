"""The embedded backend's store: the SQLite store behind the async EntryMemory protocol."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lme_bench.embeddings import Embedder
from lme_bench.entries.models import Entry, NewEntry, SearchResult
from lme_bench.reference_memory.store import EmbeddedStore
from lme_bench.reference_memory.tool_results import PROMPT_TYPES, default_prompts


class EmbeddedEntryStore:
    name = "embedded"

    def __init__(
        self,
        path: Path | str,
        *,
        search: str = "bm25",
        alpha: float = 0.6,
        embedder: Embedder | None = None,
    ) -> None:
        self.store = EmbeddedStore(path, search=search, alpha=alpha, embedder=embedder)

    async def get_or_create_vault(self, title: str, description: str = "") -> str:
        return self.store.get_or_create_vault(title, description)

    async def get_or_create_memory(
        self, vault_id: str, title: str, memory_type: str = "CHAT", description: str = ""
    ) -> str:
        return self.store.get_or_create_memory(vault_id, title, memory_type, description)

    async def add_entries(self, vault_id: str, memory_id: str, entries: Sequence[NewEntry]) -> None:
        self.store.add_entries(memory_id, entries)

    async def put_context(self, vault_id: str, memory_id: str, content: str) -> None:
        self.store.put_context(memory_id, content)

    async def await_consistency(self, memory_id: str) -> None:
        return None  # writes are synchronous: the store is always consistent

    async def get_context(self, vault_id: str, memory_id: str) -> str | None:
        latest = self.store.latest_context(memory_id)
        return latest[0] if latest else None

    async def recent_entries(self, vault_id: str, memory_id: str, limit: int) -> list[Entry]:
        return self.store.list_entries(memory_id, limit=limit)

    async def default_prompts(self, memory_type: str = "chat") -> dict[str, Any] | None:
        return default_prompts(memory_type) if memory_type in PROMPT_TYPES else None

    async def count_entries(self, memory_id: str) -> int:
        return self.store.count_entries(memory_id)

    async def entry_tags(self, vault_id: str, memory_id: str) -> list[dict[str, str]]:
        return self.store.entry_tags(memory_id)

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult:
        return self.store.search(memory_id, query, top_ke=top_ke, top_kc=top_kc)

    async def close(self) -> None:
        self.store.close()
