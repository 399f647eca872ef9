"""What a memory already holds, by (session key, turn index): a resumed ingestion sends only
the entries missing from it, so a retry stores nothing twice on any memory system, including
one that does not de-duplicate writes."""

from __future__ import annotations

from collections.abc import Iterable

from lme_bench.entries.capability import Entries
from lme_bench.entries.models import NewEntry

TurnKey = tuple[str, str]  # (session key, turn index), as tagged on every entry


def turn_key(tags: dict[str, str]) -> TurnKey | None:
    if "session_key" not in tags or "turn_index" not in tags:
        return None
    return tags["session_key"], tags["turn_index"]


async def held_turns(entries: Entries, memory_id: str) -> set[TurnKey]:
    """The turns the memory holds entries for, once every queued write is stored."""
    await entries.await_consistency(memory_id)
    found = (turn_key(tags) for tags in await entries.entry_tags(memory_id))
    return {key for key in found if key is not None}


def missing(entries: Iterable[NewEntry], held: set[TurnKey]) -> list[NewEntry]:
    """The entries whose turn the memory does not hold yet."""
    return [entry for entry in entries if turn_key(entry.tags) not in held]
