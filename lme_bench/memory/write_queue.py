"""Queued writes, as Mycelian does them: a write returns at once and is stored shortly after.

Each memory has its own lane: writes are applied strictly in the order they were submitted, by
one background task per busy lane, in a worker thread (the store is synchronous SQLite).
Consecutive entries are stored in one transaction. A write that fails is recorded on its lane
and handed to the next `wait` for that memory, so it is never lost silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field

from lme_bench.memory.store import EmbeddedStore
from lme_bench.memory.types import NewEntry

log = logging.getLogger(__name__)

BATCH_MAX = 500  # entries stored per transaction


@dataclass(frozen=True, slots=True)
class Write:
    """One queued write: an entry to add, or a context document to store."""

    entry: NewEntry | None = None
    context: str | None = None


@dataclass(slots=True)
class _Lane:
    pending: deque[tuple[int, Write]] = field(default_factory=deque)
    submitted: int = 0
    applied: int = 0
    failures: list[str] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    task: asyncio.Task[None] | None = None


class WriteQueue:
    def __init__(self, store: EmbeddedStore) -> None:
        self._store = store
        self._lanes: dict[str, _Lane] = {}

    def submit(self, memory_id: str, write: Write) -> None:
        """Queue a write; must be called from the event loop that runs the lanes."""
        lane = self._lanes.get(memory_id)
        if lane is None:
            lane = self._lanes[memory_id] = _Lane()
        lane.submitted += 1
        lane.pending.append((lane.submitted, write))
        if lane.task is None:
            lane.task = asyncio.get_running_loop().create_task(
                self._run(memory_id, lane), name=f"memory-writes-{memory_id}"
            )

    def pending(self, memory_id: str) -> int:
        lane = self._lanes.get(memory_id)
        return 0 if lane is None else lane.submitted - lane.applied

    async def wait(self, memory_id: str) -> list[str]:
        """Wait until every write submitted so far for the memory is applied (or failed).

        Returns, and forgets, the failures recorded for that memory since the last wait.
        """
        lane = self._lanes.get(memory_id)
        if lane is None:
            return []
        target = lane.submitted
        async with lane.changed:
            await lane.changed.wait_for(lambda: lane.applied >= target)
        failures, lane.failures = lane.failures, []
        return failures

    async def drain(self) -> list[str]:
        """Wait for every lane; returns the failures nobody has collected yet."""
        failures: list[str] = []
        for memory_id in list(self._lanes):
            failures += [f"memory {memory_id}: {text}" for text in await self.wait(memory_id)]
        return failures

    # -- the lane worker -----------------------------------------------------------------------
    async def _run(self, memory_id: str, lane: _Lane) -> None:
        try:
            while lane.pending:
                batch = [lane.pending.popleft()]
                if batch[0][1].entry is not None:
                    while (
                        lane.pending
                        and lane.pending[0][1].entry is not None
                        and len(batch) < BATCH_MAX
                    ):
                        batch.append(lane.pending.popleft())
                try:
                    await asyncio.to_thread(self._apply, memory_id, [w for _, w in batch])
                except Exception as exc:  # recorded for the next wait on this memory
                    what = "put_context" if batch[0][1].context is not None else "add_entry"
                    detail = str(exc.args[0]) if isinstance(exc, KeyError) else str(exc)
                    message = f"{len(batch)} queued {what} write(s) failed: {detail}"
                    log.warning("memory %s: %s", memory_id, message)
                    lane.failures.append(message)
                lane.applied = batch[-1][0]
                async with lane.changed:
                    lane.changed.notify_all()
        finally:
            lane.task = None
            if lane.applied < lane.submitted:  # cancelled (shutdown): the rest is not applied
                lost = lane.submitted - lane.applied
                lane.failures.append(f"{lost} queued write(s) may not be stored (cancelled)")
                lane.applied = lane.submitted
                lane.pending.clear()

    def _apply(self, memory_id: str, writes: list[Write]) -> None:
        if writes[0].context is not None:
            self._store.put_context(memory_id, writes[0].context)
            return
        self._store.add_entries(memory_id, [w.entry for w in writes if w.entry is not None])
