"""One ingestion at a time per memory, across threads' event loops."""

from __future__ import annotations

import asyncio
import threading

from lme_bench.ingest.build_locks import BuildLocks


def _ingest_in_threads(locks: BuildLocks, titles: list[str]) -> int:
    """Run one fake ingestion per title, each on its own thread's loop; the most that were
    inside one memory's lock at once."""
    inside: dict[str, int] = {}
    most = [0]
    guard = threading.Lock()

    async def ingest(title: str) -> None:
        async with locks.held(title):
            with guard:
                inside[title] = inside.get(title, 0) + 1
                most[0] = max(most[0], inside[title])
            await asyncio.sleep(0.05)
            with guard:
                inside[title] -= 1

    threads = [threading.Thread(target=asyncio.run, args=(ingest(t),)) for t in titles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return most[0]


def test_two_ingestions_of_one_memory_never_overlap() -> None:
    locks = BuildLocks()
    assert _ingest_in_threads(locks, ["conv-26"] * 4) == 1
    assert locks.in_use() == 0  # nothing kept once no one holds or waits


def test_ingestions_of_different_memories_run_together() -> None:
    started = threading.Barrier(2, timeout=5)

    async def ingest(locks: BuildLocks, title: str) -> None:
        async with locks.held(title):
            await asyncio.to_thread(started.wait)  # both must be inside at once

    locks = BuildLocks()
    threads = [threading.Thread(target=asyncio.run, args=(ingest(locks, t),)) for t in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not started.broken


def test_a_cancelled_waiter_does_not_keep_the_memory() -> None:
    locks = BuildLocks()

    async def scenario() -> None:
        async with locks.held("m"):
            waiter = asyncio.create_task(_enter(locks, "m"))
            await asyncio.sleep(0.01)
            waiter.cancel()
            await asyncio.gather(waiter, return_exceptions=True)
        await asyncio.wait_for(_enter(locks, "m"), timeout=1)

    asyncio.run(scenario())
    assert locks.in_use() == 0


async def _enter(locks: BuildLocks, title: str) -> None:
    async with locks.held(title):
        pass
