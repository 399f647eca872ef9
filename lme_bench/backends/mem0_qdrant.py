"""Embedded Qdrant folders shared by every backend object of a process.

An embedded Qdrant client locks its folder: a second client on the same folder fails, in this
process or another. lme-bench builds one backend object per stage of a question and runs
stages side by side (retrieval and answering read a memory at once), so the backend objects of
a process share one client per folder, with one lock that serialises what is done through it.
A folder held by another process is waited for (it is released when that backend closes).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOCK_POLL_S = 0.5


@dataclass
class SharedFolder:
    path: Path
    client: Any = None
    users: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)


_folders: dict[Path, SharedFolder] = {}
_folders_lock = threading.Lock()


def _open_client(path: Path, wait_s: float) -> Any:
    from qdrant_client import QdrantClient

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return QdrantClient(path=str(path))
        except RuntimeError as error:
            if "already accessed" not in str(error) or time.monotonic() >= deadline:
                raise
        time.sleep(LOCK_POLL_S)


def acquire(path: Path, wait_s: float) -> SharedFolder:
    """The folder's client, opened by the first user in this process; `release` when done."""
    with _folders_lock:
        shared = _folders.setdefault(path, SharedFolder(path))
        shared.users += 1
    try:
        with shared.lock:
            if shared.client is None:
                shared.client = _open_client(path, wait_s)
    except BaseException:
        release(shared)
        raise
    return shared


def release(shared: SharedFolder) -> bool:
    """Give the folder back; the last user closes its client. True when it was the last."""
    with _folders_lock:
        shared.users -= 1
        last = shared.users == 0
        if last and _folders.get(shared.path) is shared:
            del _folders[shared.path]
    if last:
        with shared.lock:
            if shared.client is not None:
                shared.client.close()
                shared.client = None
    return last
