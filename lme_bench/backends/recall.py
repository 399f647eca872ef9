"""Searching any memory system, with one result type for every system: `Recall`.

Hits come from the protocol's `search`, except for a system with an entry surface
(Capability.ENTRIES), which is searched through that surface in one call that also returns its
context documents; its hits are the ones its own `search` returns (entry_system.entry_hit).
Each search is timed around the system's call alone: time it spent waiting on lme-bench (the
embedding lock, a model's first load, a limiter: lme_bench.common.waits) is kept apart, as
`wait_seconds`, and is not in its `seconds`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from lme_bench.backends.capabilities import entries_of
from lme_bench.backends.entry_system import entry_hit
from lme_bench.backends.protocol import Hit, MemorySystem, Usage
from lme_bench.common.waits import timed_call
from lme_bench.entries.models import ContextHit


@dataclass(frozen=True, slots=True)
class Recall:
    """What one search of a memory found."""

    hits: list[Hit]  # best first
    contexts: list[ContextHit] = field(default_factory=list)  # context documents, best first
    latest_context: str | None = None  # the memory's newest context document
    seconds: float = 0.0  # how long the search took, waits on lme-bench left out
    wait_seconds: float = 0.0  # how long it waited on lme-bench (embedding lock, model load)


def usage_since(system: MemorySystem, before: Usage) -> Usage:
    """The system's own calls since `before` was read from its `usage()`: what a stage's
    searches cost it (query embeddings, model calls)."""
    now = system.usage()
    return Usage(
        **{name: getattr(now, name) - getattr(before, name) for name in now.__dataclass_fields__}
    )


def hit_identity(hit: Hit) -> str:
    """The hit's own id, else one made from its provenance and text (for merging searches)."""
    if hit.id is not None:
        return hit.id
    identity = f"{hit.session_key}\x1f{hit.turn_index}\x1f{hit.text}".encode()
    return "hit-" + hashlib.sha256(identity).hexdigest()[:16]


class MemorySearch:
    """One memory system's searches, on behalf of a question asked on `question_date`."""

    def __init__(self, system: MemorySystem, question_date: str) -> None:
        self.system = system
        self.question_date = question_date
        self.entries = entries_of(system)

    async def wait_until_ready(self, memory_id: str) -> None:
        await self.system.wait_until_ready(memory_id)

    async def search(self, memory_id: str, query: str, *, k: int, contexts: int = 0) -> Recall:
        """Up to `k` hits and up to `contexts` context documents (for systems that keep them)."""
        with timed_call() as clock:
            if self.entries is None:
                hits = list(
                    await self.system.search(
                        memory_id, query, question_date=self.question_date, k=k
                    )
                )
                shown: list[ContextHit] = []
                latest = None
            else:
                found = await self.entries.search(memory_id, query, top_ke=k, top_kc=contexts)
                hits = [entry_hit(hit) for hit in found.entries]
                shown, latest = list(found.contexts), found.latest_context
        return Recall(
            hits=hits[:k],
            contexts=shown,
            latest_context=latest,
            seconds=clock.own_seconds,
            wait_seconds=clock.wait_seconds,
        )
