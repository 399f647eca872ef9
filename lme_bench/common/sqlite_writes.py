"""One writer at a time per SQLite file in this process.

Every question's memory shares one store file and every ingestion one checkpoint file. Threads
that meet in SQLite's own locking wait in its busy handler, which sleeps in steps of up to
100 ms; a lock in the process hands the file over at once instead. Other processes still wait
in SQLite's busy timeout.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_locks: dict[str, threading.Lock] = {}
_kept: dict[str, sqlite3.Connection] = {}
_guard = threading.Lock()


def write_lock(path: Path | str) -> threading.Lock:
    """The process's lock for writing the SQLite file at `path`."""
    key = os.path.realpath(path)
    with _guard:
        return _locks.setdefault(key, threading.Lock())


def keep_open(path: Path | str) -> None:
    """Hold one idle connection to the WAL file at `path` until the process exits. Closing the
    last connection to a WAL file copies the whole log into the database and syncs it; every
    task opens and closes its own connections, so without this each task paid for that (12 ms
    a close on an S-scale store). Commits are as durable either way: the log is checkpointed
    as it grows, and at exit."""
    key = os.path.realpath(path)
    with _guard:
        if key not in _kept:
            db = sqlite3.connect(key, check_same_thread=False)
            db.execute("PRAGMA user_version").fetchone()  # a read opens the log: the file is held
            _kept[key] = db
            if len(_kept) == 1:
                atexit.register(_close_kept)


def _close_kept() -> None:
    with _guard:
        for db in _kept.values():
            db.close()
        _kept.clear()


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
