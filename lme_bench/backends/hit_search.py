"""A memory system's hits in the entry shape that retrieval scoring and QA read.

Systems with an entry surface are searched through it (entries and context documents);
every other system is searched through the protocol, and its hits become entries tagged
with the provenance the system returned, with no context documents.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from lme_bench.backends.protocol import Capability, Hit, MemorySystem
from lme_bench.entries.models import EntryHit, SearchResult


class EntrySearch(Protocol):
    """What QA and retrieval scoring need: wait for writes, then search entries."""

    async def await_consistency(self, memory_id: str) -> None: ...

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult: ...


def hit_entry(hit: Hit) -> EntryHit:
    tags = {"session_date": hit.date} if hit.date else {}
    if hit.session_key is not None:
        tags["session_key"] = hit.session_key
    if hit.turn_index is not None:
        tags["turn_index"] = str(hit.turn_index)
    identity = f"{hit.session_key}\x1f{hit.turn_index}\x1f{hit.text}".encode()
    return EntryHit(
        entry_id="hit-" + hashlib.sha256(identity).hexdigest()[:16],
        summary=hit.text,
        raw_entry=hit.text,
        score=hit.score,
        creation_time=hit.date or "",
        tags=tags,
    )


class HitSearch:
    """`system.search` as an EntrySearch."""

    def __init__(self, system: MemorySystem, question_date: str) -> None:
        self.system = system
        self.question_date = question_date

    async def await_consistency(self, memory_id: str) -> None:
        await self.system.wait_until_ready(memory_id)

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult:
        hits = await self.system.search(
            memory_id, query, question_date=self.question_date, k=top_ke
        )
        return SearchResult(
            entries=[hit_entry(hit) for hit in hits[:top_ke]],
            contexts=[],
            latest_context=None,
            latest_context_timestamp=None,
            mode=self.system.name,
        )


def entry_search(system: MemorySystem, question_date: str) -> EntrySearch:
    """The entry surface where the system has one, else its hits."""
    if Capability.ENTRIES in system.capabilities:
        entry_memory: EntrySearch = getattr(system, "entry_memory")  # noqa: B009
        return entry_memory
    return HitSearch(system, question_date)
