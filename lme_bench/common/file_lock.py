"""An exclusive lock across processes on a lock file (POSIX `flock`).

The operating system drops the lock when its holder closes the file or dies, so a killed
process never leaves one behind. Two holders in one process that open the file separately
exclude each other too.
"""

from __future__ import annotations

import asyncio
import fcntl
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO

_FIRST_WAIT = 0.01  # seconds between tries while another holds the lock, doubling up to
_LONGEST_WAIT = 0.5


def _open(path: Path) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a")


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold the lock on `path` (made if missing), waiting for it on this thread."""
    with _open(path) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


@asynccontextmanager
async def async_file_lock(path: Path) -> AsyncIterator[None]:
    """Hold the lock on `path`, waiting for it without blocking the event loop; a waiter
    cancelled while it waits holds nothing."""
    with _open(path) as handle:
        wait = _FIRST_WAIT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(wait)
                wait = min(wait * 2, _LONGEST_WAIT)
        yield
