"""An excerpt of what a memory holds once its ingestion is done, read back from the memory
system (never sent to it): the start of its context document and its newest entries, for the
report to show beside each question. A system without an entry surface has no way to list what
it holds; its excerpt says so."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from lme_bench.entries.capability import Entries

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


UNAVAILABLE = MemoryExcerpt(available=False)
"""The excerpt of a system that cannot list what a memory holds."""


async def read_excerpt(entries: Entries, memory_id: str) -> MemoryExcerpt | None:
    """What the memory holds, read through its entry surface (get_context, list_entries). A
    read that fails gives None (the report says it could not be read) and the ingestion
    stands."""
    try:
        return await _read(entries, memory_id)
    except Exception as error:  # the excerpt is a courtesy: it never fails the ingestion
        log.warning(
            "memory %s: its excerpt could not be read (%s: %s)",
            memory_id,
            type(error).__name__,
            error,
        )
        return None


async def _read(entries: Entries, memory_id: str) -> MemoryExcerpt:
    context = await entries.get_context(memory_id) or None
    count = await entries.count_entries(memory_id)
    recent = await entries.recent_entries(memory_id, ENTRIES_SHOWN) if count else []
    return MemoryExcerpt(
        available=True,
        context=_cut(context, CONTEXT_CHARS) if context else None,
        context_chars=len(context or ""),
        entries=[_cut(e.summary or e.raw_entry, ENTRY_CHARS) for e in recent[:ENTRIES_SHOWN]],
        entry_count=count,
    )
