"""A search's time is the system's own: waits on lme-bench's limiters and locks are kept apart."""

from __future__ import annotations

import asyncio
import threading
import time

from lme_bench.backends.protocol import Hit, Usage
from lme_bench.backends.recall import MemorySearch
from lme_bench.common.limits import InProcessLimiter, limited
from lme_bench.common.waits import CallClock, held, timed_call


class _LimitedSearch:
    """A system whose search makes one call through a limiter, then works `own_s` seconds."""

    capabilities = frozenset[str]()

    def __init__(self, limiter: InProcessLimiter, own_s: float) -> None:
        self.limiter = limiter
        self.own_s = own_s

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        async with limited(self.limiter):
            await asyncio.sleep(self.own_s)
        return [Hit("a turn", 1.0, session_key="s001")]

    def usage(self) -> Usage:
        return Usage()


def test_a_search_waiting_for_a_limiter_slot_counts_only_its_own_time() -> None:
    limiter = InProcessLimiter(concurrency=1, rpm=None)

    async def scenario() -> tuple[float, float]:
        taken = asyncio.Event()

        async def hold_the_slot() -> None:
            async with limited(limiter):
                taken.set()
                await asyncio.sleep(0.3)

        holder = asyncio.create_task(hold_the_slot())
        await taken.wait()
        search = MemorySearch(_LimitedSearch(limiter, own_s=0.02), "2023/05/30 (Tue) 23:40")  # type: ignore[arg-type]
        found = await search.search("m1", "query", k=5)
        await holder
        return found.seconds, found.wait_seconds

    own, wait = asyncio.run(scenario())
    assert wait >= 0.25  # the rest of the holder's 0.3 s
    assert 0.02 <= own < wait


def test_a_lock_another_thread_holds_is_waiting_and_overlaps_count_once() -> None:
    lock = threading.Lock()
    lock.acquire()
    release = threading.Timer(0.2, lock.release)
    with timed_call() as clock:
        release.start()
        with held(lock):
            pass
    assert 0.15 <= clock.wait_seconds <= clock.seconds
    assert clock.own_seconds == clock.seconds - clock.wait_seconds

    spans = CallClock(started=10.0, ended=12.0)
    spans.add(10.0, 11.0)
    spans.add(10.5, 11.5)  # overlaps the first: counted once
    spans.add(9.0, 10.2)  # before the call started: only its part inside
    assert spans.wait_seconds == 1.5
    assert spans.own_seconds == 0.5


def test_a_wait_outside_any_measured_call_is_counted_nowhere() -> None:
    lock = threading.Lock()
    with held(lock):  # no clock: nothing to add to, nothing fails
        pass
    with timed_call() as clock:
        time.sleep(0.01)
    assert clock.wait_seconds == 0.0 and clock.own_seconds >= 0.01
