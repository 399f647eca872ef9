"""Queued writes with group commit: a write is acknowledged only once it is stored.

`add_entry` and `put_context` still answer `enqueued`, as Mycelian's do, but the answer now means
the write is committed to the SQLite file (it survives a crash of the server). One writer task
takes the queued writes of every memory in arrival order and commits up to `BATCH_MAX` of them in
one transaction, so many concurrent clients share each commit; each caller is answered when its
transaction commits. Writes of one memory are stored in the order they were submitted.

The queue is bounded: when `capacity` writes are waiting, `submit` waits for room and, after
`full_wait_s`, raises `QueueFullError` (a retryable refusal) instead of growing. A write whose
batch fails is retried alone, so only the failing write's caller gets the error. A write whose
caller went away (cancelled) is still stored; if it fails, the next `wait` for its memory
reports it, so it is never lost silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field

from lme_bench.entries.models import NewEntry
from lme_bench.reference_memory.store import EmbeddedStore

log = logging.getLogger(__name__)

BATCH_MAX = 500  # writes committed per transaction
CAPACITY = 10_000  # writes waiting at most; more callers wait for room
FULL_WAIT_S = 30.0  # how long a caller waits for room before a QueueFullError


@dataclass(frozen=True, slots=True)
class Write:
    """One queued write: an entry to add, or a context document to store."""

    entry: NewEntry | None = None
    context: str | None = None


class QueueFullError(RuntimeError):
    """The queue stayed full for `full_wait_s`: the store is not keeping up (or is locked)."""


@dataclass(slots=True)
class _Queued:
    memory_id: str
    write: Write
    done: asyncio.Future[None]
    abandoned: bool = False  # the caller went away before the commit


@dataclass(slots=True)
class _Memory:
    """What one memory has in flight, and failures nobody was there to hear."""

    in_flight: int = 0
    failures: list[str] = field(default_factory=list)
    idle: asyncio.Event = field(default_factory=asyncio.Event)


class WriteQueue:
    def __init__(
        self, store: EmbeddedStore, *, capacity: int = CAPACITY, full_wait_s: float = FULL_WAIT_S
    ) -> None:
        if capacity < 1:
            raise ValueError(f"write queue capacity must be at least 1, got {capacity}")
        self._store = store
        self.capacity = capacity
        self.full_wait_s = full_wait_s
        self._pending: deque[_Queued] = deque()
        self._room = asyncio.Condition()
        self._memories: dict[str, _Memory] = {}
        self._writer: asyncio.Task[None] | None = None

    def waiting(self) -> int:
        """Writes queued and not yet taken into a transaction."""
        return len(self._pending)

    async def submit(self, memory_id: str, write: Write) -> None:
        """Queue a write and return once it is committed; raises what storing it raised, or
        QueueFullError when no room came up within `full_wait_s`."""
        if len(self._pending) >= self.capacity:
            await self._wait_for_room()
        memory = self._memories.setdefault(memory_id, _Memory())
        memory.in_flight += 1
        memory.idle.clear()
        queued = _Queued(memory_id, write, asyncio.get_running_loop().create_future())
        self._pending.append(queued)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(
                self._write_all(), name="memory-writes"
            )
        # The write goes on if the caller leaves: shield it from the caller's cancellation.
        try:
            await asyncio.shield(queued.done)
        except asyncio.CancelledError:
            queued.abandoned = True
            if queued.done.done() and queued.done.exception() is not None:
                self._record(queued, queued.done.exception())
            raise

    async def _wait_for_room(self) -> None:
        async with self._room:
            try:
                await asyncio.wait_for(
                    self._room.wait_for(lambda: len(self._pending) < self.capacity),
                    self.full_wait_s,
                )
            except TimeoutError:
                raise QueueFullError(
                    f"{len(self._pending)} writes are waiting to be stored (the queue holds"
                    f" {self.capacity}); try again shortly"
                ) from None

    async def wait(self, memory_id: str) -> list[str]:
        """Wait until nothing is in flight for the memory; returns, and forgets, failures of
        writes whose callers had gone."""
        memory = self._memories.get(memory_id)
        if memory is None:
            return []
        if memory.in_flight:
            await memory.idle.wait()
        failures, memory.failures = memory.failures, []
        return failures

    async def drain(self) -> list[str]:
        """Wait for every memory; returns the failures nobody has collected yet."""
        failures: list[str] = []
        for memory_id in list(self._memories):
            failures += [f"memory {memory_id}: {text}" for text in await self.wait(memory_id)]
        return failures

    # -- the writer --------------------------------------------------------------------------
    async def _write_all(self) -> None:
        while self._pending:
            batch = [self._pending.popleft() for _ in range(min(BATCH_MAX, len(self._pending)))]
            async with self._room:
                self._room.notify_all()
            try:
                await asyncio.to_thread(self._store_batch, batch)
                outcomes: list[BaseException | None] = [None] * len(batch)
            except Exception as exc:
                outcomes = [exc] if len(batch) == 1 else await self._one_by_one(batch)
            for queued, outcome in zip(batch, outcomes, strict=True):
                self._settle(queued, outcome)

    async def _one_by_one(self, batch: list[_Queued]) -> list[BaseException | None]:
        """After a failed batch: each write in its own transaction, to find the failing one."""
        outcomes: list[BaseException | None] = []
        for queued in batch:
            try:
                await asyncio.to_thread(self._store_batch, [queued])
                outcomes.append(None)
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    def _settle(self, queued: _Queued, outcome: BaseException | None) -> None:
        memory = self._memories[queued.memory_id]
        if outcome is None or queued.abandoned:
            queued.done.set_result(None)
        else:
            queued.done.set_exception(outcome)  # the caller hears of it
        if outcome is not None and queued.abandoned:
            self._record(queued, outcome)
        memory.in_flight -= 1
        if memory.in_flight == 0:
            memory.idle.set()

    def _record(self, queued: _Queued, error: BaseException | None) -> None:
        """Keep a failure nobody heard of for the memory's next `wait`."""
        what = "put_context" if queued.write.context is not None else "add_entry"
        detail = str(error.args[0]) if isinstance(error, KeyError) else str(error)
        log.warning("memory %s: queued %s failed: %s", queued.memory_id, what, detail)
        self._memories[queued.memory_id].failures.append(f"queued {what} failed: {detail}")

    def _store_batch(self, batch: list[_Queued]) -> None:
        entries = [(q.memory_id, q.write.entry) for q in batch if q.write.entry is not None]
        contexts = [(q.memory_id, q.write.context) for q in batch if q.write.context is not None]
        self._store.store_writes(entries, contexts)
