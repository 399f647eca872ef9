"""In-process provider limits: slots across threads and event loops, rpm pacing, the registry,
and one slot per model call attempt."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from lme_bench.common.limits import (
    STAGGER_SESSIONS,
    InProcessLimiter,
    Limiter,
    Pacer,
    ThreadSafeSlots,
    call_priority,
    every_ingestion_started,
    ingestions_starting,
    numbered_sessions,
    provider_limiter,
    set_shared_limiter_factory,
)
from lme_bench.config.run_section import LimitSettings, ProviderLimit
from lme_bench.config.settings import Settings
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.retry import RetryPolicy


class InFlight:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def exit(self) -> None:
        with self.lock:
            self.now -= 1


def _in_threads(threads: int, work: Callable[[int], Coroutine[Any, Any, None]]) -> None:
    """Run `work(i)` in `threads` threads, each on its own event loop, started together."""
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            asyncio.run(work(i))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(30)
    assert not errors, errors


@pytest.mark.parametrize("limit", [1, 3])
def test_slots_hold_across_eight_threads_each_with_its_own_loop(limit: int) -> None:
    limiter = InProcessLimiter(concurrency=limit, rpm=None)
    seen = InFlight()
    done: list[int] = []

    async def work(i: int) -> None:
        for _ in range(3):
            async with limiter.slot():
                seen.enter()
                await asyncio.sleep(0.02)
                seen.exit()
            done.append(i)

    _in_threads(8, work)
    assert len(done) == 24
    assert seen.peak == limit  # reached, never exceeded
    assert seen.now == 0


def test_rpm_spaces_call_starts_evenly_across_threads() -> None:
    rpm = 600.0  # one start every 0.1 s
    limiter = InProcessLimiter(concurrency=None, rpm=rpm)
    starts: list[float] = []
    lock = threading.Lock()

    async def work(i: int) -> None:
        for _ in range(3):
            async with limiter.slot():
                with lock:
                    starts.append(time.monotonic())

    began = time.monotonic()
    _in_threads(4, work)
    starts.sort()
    assert len(starts) == 12
    # What the pacer guarantees: the k-th start is booked k intervals after the first, and no
    # call starts before its booking (a busy machine may wake a thread late, never early).
    assert all(start - began >= k * 60 / rpm - 0.01 for k, start in enumerate(starts))


def test_pacer_books_starts_one_interval_apart() -> None:
    now = [100.0]
    pacer = Pacer(rpm=120, clock=lambda: now[0])  # every 0.5 s
    assert [pacer.reserve() for _ in range(3)] == [0.0, 0.5, 1.0]
    now[0] = 110.0  # long idle: no burst is saved up
    assert [pacer.reserve() for _ in range(2)] == [0.0, 0.5]


def test_a_cancelled_waiter_leaves_no_slot_behind() -> None:
    async def scenario() -> None:
        slots = ThreadSafeSlots(1)
        await slots.acquire()
        waiting = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0.01)
        waiting.cancel()  # cancelled while queued
        with pytest.raises(asyncio.CancelledError):
            await waiting
        granted = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0.01)
        slots.release()  # the slot is handed to `granted`…
        granted.cancel()  # …which is cancelled before it wakes: the slot must come back
        with pytest.raises(asyncio.CancelledError):
            await granted
        await asyncio.wait_for(slots.acquire(), 1.0)

    asyncio.run(scenario())


def test_freed_slots_go_by_call_priority_then_arrival() -> None:
    """Answer and judge calls (no priority set) first, then ingestions by their priority, in
    arrival order among equals; whatever thread each waiter's loop runs on."""
    order: list[str] = []

    async def scenario() -> None:
        slots = ThreadSafeSlots(1)
        await slots.acquire()

        async def wait(name: str, priority: tuple[float, ...] | None) -> None:
            if priority is not None:
                call_priority.set(priority)
            await slots.acquire()
            order.append(name)
            slots.release()

        names = [("young ingest", (1.0, 200.0)), ("old ingest", (1.0, 100.0))]
        names += [("answer", None), ("ending ingest", (0.0, -3.0)), ("judge", None)]
        names += [("old ingest again", (1.0, 100.0)), ("longer ending ingest", (0.0, -9.0))]
        waiters = []
        for name, priority in names:
            waiters.append(asyncio.create_task(wait(name, priority)))
            await asyncio.sleep(0.01)  # arrive in this order
        other_loop = threading.Thread(target=asyncio.run, args=(wait("older ingest", (1.0, 50.0)),))
        other_loop.start()
        await asyncio.sleep(0.05)
        slots.release()
        await asyncio.gather(*waiters)
        other_loop.join(5)

    asyncio.run(scenario())
    assert order == [
        "answer",
        "judge",
        "longer ending ingest",
        "ending ingest",
        "older ingest",
        "old ingest",
        "old ingest again",
        "young ingest",
    ]


def test_sessions_go_oldest_first_then_most_left_first_once_every_ingestion_started() -> None:
    """While questions wait to start, each session of an ingestion carries its start; once
    every one has started, its sessions left, less a stagger by the order they started in."""

    def scenario() -> None:
        ingestions_starting()
        first = [call_priority_of(i) for i, _ in numbered_sessions(["a", "b", "c"])]
        assert len(set(first)) == 1 and first[0][0] == 1.0  # one priority: when it started
        second = [call_priority_of(i) for i, _ in numbered_sessions(["a", "b"])]
        assert second[0] > first[0]  # started later: goes after
        every_ingestion_started()
        third = [call_priority_of(i) for i, _ in numbered_sessions(["a", "b", "c"])]
        assert third == [(0.0, 2 * STAGGER_SESSIONS - left) for left in (3, 2, 1)]
        assert max(third) < min(first)  # all before any ingestion still going oldest first
        ingestions_starting()  # a new run: counted from the start, oldest first
        assert call_priority_of(next(numbered_sessions(["a"]))[0])[0] == 1.0

    contextvars.copy_context().run(scenario)  # the priorities set stay in that context
    assert call_priority.get() == ()


def call_priority_of(_index: int) -> tuple[float, ...]:
    return call_priority.get()


def _settings(shared: bool = False, **providers: ProviderLimit) -> Settings:
    return Settings(limits=LimitSettings(shared=shared, providers=providers))


def test_registry_gives_one_limiter_per_provider_and_values() -> None:
    a = provider_limiter(_settings(openai=ProviderLimit(concurrency=4)), "openai")
    b = provider_limiter(_settings(openai=ProviderLimit(concurrency=4)), "openai")
    c = provider_limiter(_settings(openai=ProviderLimit(concurrency=5)), "openai")
    assert isinstance(a, InProcessLimiter) and a is b and c is not a
    assert a.concurrency == 4 and isinstance(c, InProcessLimiter) and c.concurrency == 5
    assert provider_limiter(_settings(openai=ProviderLimit(concurrency=4)), "bedrock") is None
    assert provider_limiter(_settings(openai=ProviderLimit()), "openai") is None


class Recording:
    def __init__(self, name: str, limit: ProviderLimit) -> None:
        self.name, self.limit = name, limit

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        yield


@pytest.fixture
def shared_factory() -> Iterator[None]:
    set_shared_limiter_factory(Recording)
    yield
    set_shared_limiter_factory(None)


def test_shared_runs_use_the_installed_factory(shared_factory: None) -> None:
    limit = ProviderLimit(concurrency=2, rpm=30)
    shared = provider_limiter(_settings(True, slow=limit), "slow")
    assert isinstance(shared, Recording) and shared.name == "slow" and shared.limit == limit
    assert provider_limiter(_settings(True, slow=limit), "slow") is shared
    local = provider_limiter(_settings(False, slow=limit), "slow")
    assert isinstance(local, InProcessLimiter)
    set_shared_limiter_factory(None)  # without a factory, shared settings fall back
    assert isinstance(provider_limiter(_settings(True, slow=limit), "slow"), InProcessLimiter)


class Timeline:
    """A limiter that records when each slot was taken and given back."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        entered = time.monotonic()
        try:
            yield
        finally:
            self.spans.append((entered, time.monotonic()))


def test_every_attempt_takes_a_slot_and_backoff_holds_none() -> None:
    timeline = Timeline()
    limiter: Limiter = timeline
    model = ScriptedChatModel(script=["ok"], throttle_every=2, throttle_retry_after_s=None)
    policy = RetryPolicy(attempts=3, throttle_base_s=0.1, jitter=0.0)
    counted = CountedModel(model, policy, limiter=limiter)

    async def calls() -> None:
        assert (await counted.ainvoke([HumanMessage("1")])).content == "ok"
        assert (await counted.ainvoke([HumanMessage("2")])).content == "ok"  # throttled once

    asyncio.run(calls())
    assert model.attempts == 3 and len(timeline.spans) == 3
    assert counted.account.retries.retries == 1
    second_exit, third_enter = timeline.spans[1][1], timeline.spans[2][0]
    assert third_enter - second_exit >= 0.09  # the backoff ran with no slot held
