"""Time a memory system's call spends waiting on lme-bench itself, kept apart from its own.

A call measured with `timed_call()` records, besides its wall time, the spans in which it waited
on something of lme-bench's rather than worked: the process-wide embedding lock (one forward
pass at a time), the first load of a model, a provider limiter's slot or pacing. Those waits
mark themselves with `waiting()`. The system's own time is the wall time less the waits
(overlapping waits counted once).

The measured call is found through a context variable, so a wait counts where it happens in
the call's own task, in tasks it starts and in threads started with `asyncio.to_thread`
(which copy the context); a thread the system starts by other means is not seen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class CallClock:
    """One measured call: its wall time, and the spans it waited on lme-bench."""

    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None
    spans: list[tuple[float, float]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, start: float, end: float) -> None:
        with self._lock:
            self.spans.append((start, end))

    @property
    def seconds(self) -> float:
        """Wall time of the call (so far, while it runs)."""
        end = self.ended if self.ended is not None else time.perf_counter()
        return end - self.started

    @property
    def wait_seconds(self) -> float:
        """Time within the call spent waiting on lme-bench (overlapping waits once)."""
        with self._lock:
            spans = sorted(self.spans)
        total, reach = 0.0, float("-inf")
        for start, end in spans:
            start = max(start, reach, self.started)
            if end > start:
                total += end - start
                reach = end
        return min(total, self.seconds)

    @property
    def own_seconds(self) -> float:
        """The system's own time: wall time less the waits."""
        return max(self.seconds - self.wait_seconds, 0.0)


_current: ContextVar[tuple[CallClock, ...]] = ContextVar("lme_bench_call_clocks", default=())


@contextmanager
def timed_call() -> Iterator[CallClock]:
    """Measure the call made inside; waits inside count for this clock (and any enclosing)."""
    clock = CallClock()
    token = _current.set((*_current.get(), clock))
    try:
        yield clock
    finally:
        clock.ended = time.perf_counter()
        _current.reset(token)


@contextmanager
def waiting() -> Iterator[None]:
    """Mark the code inside as waiting on lme-bench, for every call being measured here."""
    clocks = _current.get()
    start = time.perf_counter()
    try:
        yield
    finally:
        if clocks:
            end = time.perf_counter()
            for clock in clocks:
                clock.add(start, end)


@contextmanager
def held(lock: threading.Lock) -> Iterator[None]:
    """`with lock:`, the time spent getting it counted as waiting."""
    if not lock.acquire(blocking=False):
        with waiting():
            lock.acquire()
    try:
        yield
    finally:
        lock.release()
