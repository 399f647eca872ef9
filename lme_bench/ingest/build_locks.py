"""One ingestion at a time into a memory, within a process and across processes.

A run starts one ingestion per memory build (lme_bench.run.collect), but two runs sharing
memories (`[cache] scope = "shared"`), in one process or in several (two `lme-bench run`s, two
Prefect workers), or a build asked again while its first ingestion is still going, would
otherwise write the same sessions into the same memory at once. An ingestion holds its memory's
lock from before it opens the memory until it ends: a lock in the process, then a lock file
beside the run's checkpoints (lme_bench.common.file_lock). A second one waits, then finds the
build checkpointed as done and reuses that ingestion (lme_bench.ingest.question).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from lme_bench.common.file_lock import async_file_lock
from lme_bench.common.limits import ThreadSafeSlots

LOCKS_FOLDER = "build-locks"


class BuildLocks:
    """A mutex per memory title, usable from coroutines on any thread's event loop; with a
    folder, also a lock file there that other processes take for the same title."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, ThreadSafeSlots] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def held(self, title: str, folder: Path | None = None) -> AsyncIterator[None]:
        with self._guard:
            lock = self._locks.setdefault(title, ThreadSafeSlots(1))
            self._users[title] = self._users.get(title, 0) + 1
        try:
            await lock.acquire()
            try:
                if folder is None:
                    yield
                else:
                    async with async_file_lock(folder / LOCKS_FOLDER / f"{title}.lock"):
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
