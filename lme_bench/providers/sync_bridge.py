"""Synchronous model calls (a memory system such as mem0 calls its model synchronously) run on
one event loop kept for the process in a thread of its own, so they reuse its kept-alive
connections instead of opening one per call on a loop made for that call alone. The loop's
connections are closed at interpreter exit (lme_bench.common.loop_end)."""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lme_bench.common.loop_end import end_of_loop

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _started() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            _thread = threading.Thread(
                target=_loop.run_forever, name="lme-bench-sync-calls", daemon=True
            )
            _thread.start()
            atexit.register(_stop)
        return _loop


def _stop() -> None:
    global _loop
    with _lock:
        loop, _loop = _loop, None
    if loop is None or not loop.is_running():
        return
    asyncio.run_coroutine_threadsafe(end_of_loop(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)


def _forget_in_child() -> None:
    """A forked child has the loop object but not its thread: it starts its own."""
    global _loop, _thread
    _loop, _thread = None, None


os.register_at_fork(after_in_child=_forget_in_child)


def run_sync(call: Coroutine[Any, Any, T]) -> T:
    """Run `call` to its end from synchronous code, on the process's call loop (the caller's
    context variables go with it). From that loop's own thread, on a loop of its own."""
    if threading.current_thread() is _thread:  # called from a call on the loop: no deadlock
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, call).result()
    return asyncio.run_coroutine_threadsafe(call, _started()).result()
