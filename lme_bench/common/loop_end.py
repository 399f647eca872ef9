"""Work to do when an event loop ends: close what was opened for that loop.

A run calls models from many event loops (each task's `asyncio.run`, a loop per synchronous call
of a memory system). A connection belongs to the loop that opened it and must be closed on that
loop, before it closes. `asyncio.run` (and `asyncio.Runner`) finish every loop by closing the
async generators still open on it; `at_loop_end` starts one such generator per loop, whose
`finally` runs the loop's closers, so they run on whatever runner made the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable

log = logging.getLogger(__name__)

Closer = Callable[[], Awaitable[None]]


class _LoopEnd:
    __slots__ = ("closers", "watch")

    def __init__(self) -> None:
        self.closers: list[Closer] = []
        self.watch: AsyncGenerator[None, None] | None = None


_lock = threading.Lock()
_ends: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopEnd] = weakref.WeakKeyDictionary()


async def _run_closers(end: _LoopEnd) -> None:
    with _lock:
        closers, end.closers = end.closers, []
    for closer in reversed(closers):  # the last opened first
        try:
            await closer()
        except Exception:  # one that fails must not keep the others open
            log.debug("closing at the end of an event loop failed", exc_info=True)


async def _watch(end: _LoopEnd) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        with _lock:
            _ends.pop(asyncio.get_running_loop(), None)
        await _run_closers(end)


def _start(watch: AsyncGenerator[None, None]) -> None:
    """Run `watch` to its first `yield` without awaiting: the loop now tracks it (its first-
    iteration hook ran when `asend` was called) and closes it as the loop shuts down."""
    step = watch.asend(None)
    with contextlib.suppress(StopIteration):
        step.send(None)


def at_loop_end(closer: Closer) -> None:
    """Await `closer()` on the running loop when that loop ends (in reverse order of
    registration). Must be called with a loop running in this thread."""
    loop = asyncio.get_running_loop()
    with _lock:
        end = _ends.get(loop)
        started = end is not None
        if end is None:
            end = _ends[loop] = _LoopEnd()
        end.closers.append(closer)
    if not started:
        end.watch = _watch(end)
        _start(end.watch)


async def end_of_loop() -> None:
    """Run the running loop's closers now (a loop that a caller ends by hand)."""
    with _lock:
        end = _ends.get(asyncio.get_running_loop())
    if end is not None:
        await _run_closers(end)
