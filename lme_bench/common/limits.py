"""Limits on model calls per provider: calls in flight and requests per minute.

One limiter holds for the whole process: across threads and across event loops (a thread pool
task runner gives every async task its own thread and loop), so waiting uses threading locks
and futures handed between loops, never an asyncio.Semaphore, and never blocks a loop.

`provider_limiter(settings, name)` returns the process's limiter for a provider (the same object
for the same values). With `[limits] shared = true`, a factory set by the orchestration layer
(`set_shared_limiter_factory`) supplies limiters that hold across processes instead.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from typing import Protocol, TypeVar

from lme_bench.common.waits import waiting
from lme_bench.config.run_section import ProviderLimit
from lme_bench.config.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


class Limiter(Protocol):
    def slot(self) -> AbstractAsyncContextManager[None]:
        """Held for one model call attempt."""
        ...


@asynccontextmanager
async def limited(limiter: Limiter | None) -> AsyncIterator[None]:
    """`limiter`'s slot held for one call (none without a limiter); the time spent getting it
    counts as waiting on lme-bench, not as the call's own (lme_bench.common.waits)."""
    if limiter is None:
        yield
        return
    async with AsyncExitStack() as stack:
        with waiting():
            await stack.enter_async_context(limiter.slot())
        yield


SharedLimiterFactory = Callable[[str, ProviderLimit], Limiter]


Priority = tuple[float, ...]

call_priority: ContextVar[Priority] = ContextVar("call_priority", default=())
"""Which waiting call a freed slot goes to: the lowest value first, equal ones in arrival order.
Calls that finish a question (answer, judge) keep the default, which sorts first; an ingestion
sets one for each of its sessions (`numbered_sessions`)."""

STAGGER_SESSIONS = 0.25
"""Once every ingestion has started, how much less urgent each one counts than the one started
before it, in sessions left (see `numbered_sessions`)."""


class _IngestionOrder:
    """What orders the ingestions of the run in progress: how many have started, and whether
    every one has (the run says so; until then, questions may still be waiting to start)."""

    def __init__(self) -> None:
        self._started = itertools.count()
        self.all_started = False

    def next_ordinal(self) -> int:
        return next(self._started)


_order = _IngestionOrder()


def ingestions_starting() -> None:
    """A run begins: its questions wait to start ingesting."""
    global _order
    _order = _IngestionOrder()


def every_ingestion_started() -> None:
    """The run's last ingestion has started: no question waits any more."""
    _order.all_started = True


def numbered_sessions(sessions: Sequence[T]) -> Iterator[tuple[int, T]]:
    """A question's sessions with their index, the model calls of each given their priority.

    While questions wait to start, an older ingestion's calls go first: with more ingestions
    than slots the oldest run at full speed and the younger fill the gaps, so questions finish
    one after another and free their place for the next.

    Once every ingestion has started, the one with the most sessions left goes first: the last
    ones then end close together, instead of the slots standing idle while those started last
    run their sessions one call at a time. Each counts `STAGGER_SESSIONS` less urgent than the
    one started before it, so they still end one after another (over the last seconds of the
    run, not all at once), their answers and judging overlapping the others' last sessions."""
    order = _order
    started = time.monotonic()
    ordinal = order.next_ordinal()
    for index, session in enumerate(sessions):
        if order.all_started:
            left = len(sessions) - index
            call_priority.set((0.0, STAGGER_SESSIONS * ordinal - left))
        else:
            call_priority.set((1.0, started))
        yield index, session


class _Waiter:
    __slots__ = ("future", "granted", "loop", "order")

    def __init__(self, loop: asyncio.AbstractEventLoop, order: tuple[Priority, int]) -> None:
        self.loop = loop
        self.order = order
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False

    def __lt__(self, other: _Waiter) -> bool:
        return self.order < other.order


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ThreadSafeSlots:
    """A counting semaphore for coroutines on any thread's loop. A released slot is handed
    straight to the waiter first by `call_priority` (then by arrival), whose loop is woken."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self._lock = threading.Lock()
        self._free = size
        self._waiters: list[_Waiter] = []  # a heap
        self._arrivals = itertools.count()

    async def acquire(self) -> None:
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            order = (call_priority.get(), next(self._arrivals))
            waiter = _Waiter(asyncio.get_running_loop(), order)
            heapq.heappush(self._waiters, waiter)
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._waiters.remove(waiter)
                    heapq.heapify(self._waiters)
            if granted:  # handed a slot while being cancelled: pass it on
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                waiter = heapq.heappop(self._waiters)
                try:
                    waiter.loop.call_soon_threadsafe(_wake, waiter.future)
                except RuntimeError:  # that waiter's loop is closed: try the next one
                    continue
                waiter.granted = True
                return
            self._free += 1


class Pacer:
    """Spaces starts evenly: at most `rpm` per 60 s, one every 60/rpm seconds, no bursts."""

    def __init__(self, rpm: float, clock: Callable[[], float] = time.monotonic) -> None:
        if rpm <= 0:
            raise ValueError("rpm must be positive")
        self.interval = 60.0 / rpm
        self._clock = clock
        self._lock = threading.Lock()
        self._next = float("-inf")

    def reserve(self) -> float:
        """Book the next start; seconds to wait until it."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
            return start - now

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


class InProcessLimiter:
    """At most `concurrency` calls in flight and `rpm` call starts per minute in this process."""

    def __init__(self, concurrency: int | None, rpm: float | None) -> None:
        self.concurrency = concurrency
        self.rpm = rpm
        self._slots = ThreadSafeSlots(concurrency) if concurrency else None
        self._pacer = Pacer(rpm) if rpm else None

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self._slots is not None:
            await self._slots.acquire()
        try:
            if self._pacer is not None:  # paced after the slot, so starts stay evenly spaced
                await self._pacer.wait()
            yield
        finally:
            if self._slots is not None:
                self._slots.release()

    def __repr__(self) -> str:
        return f"InProcessLimiter(concurrency={self.concurrency}, rpm={self.rpm})"


_registry_lock = threading.Lock()
_registry: dict[tuple[str, int | None, float | None, bool], Limiter] = {}
_shared_factory: SharedLimiterFactory | None = None
_warned_unshared: set[str] = set()


def set_shared_limiter_factory(factory: SharedLimiterFactory | None) -> None:
    """Install (or with None remove) the maker of cross-process limiters for `shared` runs."""
    global _shared_factory
    with _registry_lock:
        _shared_factory = factory
        for key in [k for k in _registry if k[3]]:
            del _registry[key]


def provider_limiter(settings: Settings, provider: str) -> Limiter | None:
    """The process's limiter for `provider` ("openai", "bedrock", "fake" or a [providers]
    name), or None when [limits.providers.<name>] sets no limit."""
    limit = settings.limits.providers.get(provider)
    if limit is None or (limit.concurrency is None and limit.rpm is None):
        return None
    with _registry_lock:
        shared = settings.limits.shared and _shared_factory is not None
        if settings.limits.shared and not shared and provider not in _warned_unshared:
            _warned_unshared.add(provider)
            log.warning(
                "[limits] shared = true but no shared limiter is installed: the limits of "
                "provider %r hold in this process only",
                provider,
            )
        key = (provider, limit.concurrency, limit.rpm, shared)
        found = _registry.get(key)
        if found is None:
            if shared and _shared_factory is not None:
                found = _shared_factory(provider, limit)
            else:
                found = InProcessLimiter(limit.concurrency, limit.rpm)
            _registry[key] = found
        return found
