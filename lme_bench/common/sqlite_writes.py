"""One writer at a time per SQLite file in this process.

Every question's memory shares one store file and every ingestion one checkpoint file. Threads
that meet in SQLite's own locking wait in its busy handler, which sleeps in steps of up to
100 ms; a lock in the process hands the file over at once instead. Other processes still wait
in SQLite's busy timeout.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def write_lock(path: Path | str) -> threading.Lock:
    """The process's lock for writing the SQLite file at `path`."""
    key = os.path.realpath(path)
    with _guard:
        return _locks.setdefault(key, threading.Lock())


@contextmanager
def immediate(db: sqlite3.Connection, lock: threading.Lock) -> Iterator[sqlite3.Connection]:
    """A write transaction (BEGIN IMMEDIATE … COMMIT, rolled back on error) under `lock`, on a
    connection opened with isolation_level=None."""
    with lock:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def database_file(db: sqlite3.Connection) -> str:
    """The file behind a connection's main database."""
    return str(db.execute("PRAGMA database_list").fetchone()[2])
