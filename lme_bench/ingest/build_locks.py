"""One ingestion at a time into a memory within a process.

A run starts one ingestion per memory build (lme_bench.run.collect), but two runs in one
process sharing memories (`[cache] scope = "shared"`), or a build asked again while its first
ingestion is still going, would otherwise write the same sessions into the same memory at
once. An ingestion holds its memory's lock from before it opens the memory until it ends;
a second one waits, then finds the sessions checkpointed as done and skips them.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from lme_bench.common.limits import ThreadSafeSlots


class BuildLocks:
    """A mutex per memory title, usable from coroutines on any thread's event loop."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, ThreadSafeSlots] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def held(self, title: str) -> AsyncIterator[None]:
        with self._guard:
            lock = self._locks.setdefault(title, ThreadSafeSlots(1))
            self._users[title] = self._users.get(title, 0) + 1
        try:
            await lock.acquire()
            try:
                yield
            finally:
                lock.release()
        finally:
            with self._guard:  # forget a lock nobody holds or waits for
                self._users[title] -= 1
                if not self._users[title]:
                    del self._users[title], self._locks[title]

    def in_use(self) -> int:
        """Memories held or waited for now."""
        with self._guard:
            return len(self._locks)


BUILD_LOCKS = BuildLocks()
