"""An excerpt of what a memory holds once its ingestion is done, read back from the memory
system (never sent to it): the start of its context document and its newest entries, for the
report to show beside each question. A system without an entry surface has no way to list what
it holds; its excerpt says so."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from lme_bench.entries.entry_memory import EntryMemory

CONTEXT_CHARS = 600  # of the context document shown
ENTRIES_SHOWN = 3
ENTRY_CHARS = 200
log = logging.getLogger(__name__)
NOT_AVAILABLE = "not available from this backend (it has no way to list what a memory holds)"


@dataclass(frozen=True, slots=True)
class MemoryExcerpt:
    available: bool
    context: str | None = None  # the start of the context document, as stored
    context_chars: int = 0  # the whole document's length
    entries: list[str] = field(default_factory=list)  # the newest entries' summaries
    entry_count: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "context": self.context,
            "context_chars": self.context_chars,
            "entries": list(self.entries),
            "entry_count": self.entry_count,
        }


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


async def read_excerpt(
    backend: EntryMemory | None, vault_id: str, memory_id: str
) -> MemoryExcerpt | None:
    """What the memory holds, read through its entry surface (get_context, list_entries);
    `backend` None: a system that cannot list its contents. A read that fails gives None (the
    report says it could not be read) and the ingestion stands."""
    if backend is None:
        return MemoryExcerpt(available=False)
    try:
        return await _read(backend, vault_id, memory_id)
    except Exception as error:  # the excerpt is a courtesy: it never fails the ingestion
        log.warning(
            "memory %s: its excerpt could not be read (%s: %s)",
            memory_id,
            type(error).__name__,
            error,
        )
        return None


async def _read(backend: EntryMemory, vault_id: str, memory_id: str) -> MemoryExcerpt:
    context = await backend.get_context(vault_id, memory_id) or None
    count = await backend.count_entries(memory_id)
    recent = await backend.recent_entries(vault_id, memory_id, ENTRIES_SHOWN) if count else []
    return MemoryExcerpt(
        available=True,
        context=_cut(context, CONTEXT_CHARS) if context else None,
        context_chars=len(context or ""),
        entries=[_cut(e.summary or e.raw_entry, ENTRY_CHARS) for e in recent[:ENTRIES_SHOWN]],
        entry_count=count,
    )
