"""Per-session checkpoints of ingestion, so a retried question resumes where it stopped
(the ingestion loop, loop.py, and its writers).

A session's buffered writes are saved here before they go to the memory (write-ahead), and the
session is marked done once they are stored. On a retry: done sessions are skipped, a session
whose writes were saved but not confirmed is written again from the saved copy (no model call;
entries of turns the memory already holds are left out), and any other session is redone from
scratch (nothing of it reached the memory). Keyed by memory id, so a new memory starts over.

Each memory also has an ingestion id, new whenever an ingestion starts writing to it: later
stages' cache keys hash it, so a memory filled again (emptied, then ingested anew under the
same id) has its retrieval, answers and judging redone.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lme_bench.common.sqlite_writes import keep_open, write_lock
from lme_bench.entries.models import NewEntry
from lme_bench.ingest.records import SessionRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    memory_id TEXT NOT NULL, session_key TEXT NOT NULL, mode TEXT NOT NULL,
    state TEXT NOT NULL, entries TEXT, context TEXT, record TEXT NOT NULL,
    PRIMARY KEY (memory_id, session_key, mode));
CREATE TABLE IF NOT EXISTS ingestions (memory_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ingestion_ids (memory_id TEXT PRIMARY KEY, ingestion_id TEXT NOT NULL);
"""


class Checkpoints:
    """One connection for the ingestion's lifetime (opening and closing one per session
    cost more than the rest of a session's bookkeeping); every change is committed at once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = write_lock(self.path)  # also keeps other ingestions' writes apart
        self._connection = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        # As the memory store: a commit survives a killed process; not syncing every commit to
        # disk spares each session two waits on the file (a power cut may lose the last ones).
        self._connection.execute("PRAGMA synchronous = NORMAL")
        with self._lock, self._db() as db:
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(_SCHEMA)
        keep_open(self.path)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with self._connection as db:  # commits, or rolls back on an error
            yield db

    def load(
        self, memory_id: str, session_key: str, mode: str
    ) -> tuple[str, SessionRecord, list[NewEntry], str | None] | None:
        """(state "pending" | "done", record, saved entries, saved context) or None."""
        with self._lock, self._db() as db:
            row = db.execute(
                "SELECT state, record, entries, context FROM sessions"
                " WHERE memory_id = ? AND session_key = ? AND mode = ?",
                (memory_id, session_key, mode),
            ).fetchone()
        if row is None:
            return None
        entries = [NewEntry(**e) for e in json.loads(row[2] or "[]")]
        return row[0], SessionRecord.from_json(json.loads(row[1])), entries, row[3]

    def states(self, memory_id: str, mode: str) -> dict[str, tuple[str, SessionRecord]]:
        """Every checkpointed session of the memory in `mode`, by session key: (state, record),
        in one read (raw ingestion keeps no entries in its checkpoints)."""
        with self._lock, self._db() as db:
            rows = db.execute(
                "SELECT session_key, state, record FROM sessions WHERE memory_id = ? AND mode = ?",
                (memory_id, mode),
            ).fetchall()
        return {key: (state, SessionRecord.from_json(json.loads(rec))) for key, state, rec in rows}

    def save_pending(
        self, memory_id: str, record: SessionRecord, entries: list[NewEntry], context: str | None
    ) -> None:
        payload = json.dumps(
            [{"raw_entry": e.raw_entry, "summary": e.summary, "tags": e.tags} for e in entries]
        )
        self._save_pending(memory_id, [(record, payload, context)])

    def save_all_pending(self, memory_id: str, records: list[SessionRecord]) -> None:
        """Save sessions as pending, with no entries or context, in one commit."""
        self._save_pending(memory_id, [(record, "[]", None) for record in records])

    def _save_pending(
        self, memory_id: str, rows: list[tuple[SessionRecord, str, str | None]]
    ) -> None:
        with self._lock, self._db() as db:
            db.executemany(
                "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, 'pending', ?, ?, ?)",
                [
                    (memory_id, r.session_key, r.mode, payload, context, json.dumps(r.to_json()))
                    for r, payload, context in rows
                ],
            )

    def mark_done(self, memory_id: str, record: SessionRecord) -> None:
        self.mark_all_done(memory_id, [record])

    def mark_all_done(self, memory_id: str, records: list[SessionRecord]) -> None:
        """Mark sessions done in one commit."""
        with self._lock, self._db() as db:
            db.executemany(
                "UPDATE sessions SET state = 'done', entries = NULL, record = ?"
                " WHERE memory_id = ? AND session_key = ? AND mode = ?",
                [(json.dumps(r.to_json()), memory_id, r.session_key, r.mode) for r in records],
            )

    def sessions_done(self, memory_id: str) -> int:
        """How many sessions of the memory are marked done (in any mode)."""
        with self._lock, self._db() as db:
            row = db.execute(
                "SELECT count(*) FROM sessions WHERE memory_id = ? AND state = 'done'",
                (memory_id,),
            ).fetchone()
        return int(row[0])

    def claim(self, memory_id: str, fingerprint: str, *, empty: bool) -> str | None:
        """Record which ingestion settings fill a memory (an empty one may change hands);
        the earlier settings' fingerprint if they differ."""
        verb = "REPLACE" if empty else "IGNORE"
        with self._lock, self._db() as db:
            db.execute(f"INSERT OR {verb} INTO ingestions VALUES (?, ?)", (memory_id, fingerprint))
            row = db.execute(
                "SELECT fingerprint FROM ingestions WHERE memory_id = ?", (memory_id,)
            ).fetchone()
        return None if row[0] == fingerprint else str(row[0])

    def forget(self, memory_id: str) -> None:
        """Drop a memory's session checkpoints (its memory was emptied: ingest it anew)."""
        with self._lock, self._db() as db:
            db.execute("DELETE FROM sessions WHERE memory_id = ?", (memory_id,))

    def begin_ingestion(self, memory_id: str) -> str:
        """A new ingestion id for the memory, which an ingestion is about to write to."""
        ingestion_id = uuid.uuid4().hex
        with self._lock, self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO ingestion_ids VALUES (?, ?)", (memory_id, ingestion_id)
            )
        return ingestion_id

    def ingestion_id(self, memory_id: str) -> str:
        """The id of the memory's last ingestion; "" when none was recorded here."""
        with self._lock, self._db() as db:
            row = db.execute(
                "SELECT ingestion_id FROM ingestion_ids WHERE memory_id = ?", (memory_id,)
            ).fetchone()
        return str(row[0]) if row else ""


def claimed_fingerprints(path: Path, memory_ids: list[str]) -> dict[str, str]:
    """The ingestion fingerprint each memory was claimed with, read without writing (the file
    may not exist yet: nothing claimed)."""
    if not path.is_file() or not memory_ids:
        return {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
    try:
        marks = ",".join("?" * len(memory_ids))
        rows = db.execute(
            f"SELECT memory_id, fingerprint FROM ingestions WHERE memory_id IN ({marks})",
            memory_ids,
        ).fetchall()
    except sqlite3.OperationalError:  # a file from before claims were kept
        return {}
    finally:
        db.close()
    return {str(memory_id): str(fingerprint) for memory_id, fingerprint in rows}


def checkpointed_sessions(path: Path, memory_ids: list[str], mode: str) -> list[SessionRecord]:
    """The records of every session checkpointed (stored, or saved and being stored) for these
    memories in `mode`, read without writing: what an ingestion that did not finish spent and
    stored (the file may not exist yet: nothing checkpointed)."""
    return [record for _, record in checkpointed_states(path, memory_ids, mode)]


def checkpointed_states(
    path: Path, memory_ids: list[str], mode: str, timeout: float = 60
) -> list[tuple[str, SessionRecord]]:
    """(state "pending" | "done", record) of every session checkpointed for these memories in
    `mode`, read without writing, waiting at most `timeout` seconds for a writer's lock."""
    if not path.is_file() or not memory_ids:
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
    try:
        marks = ",".join("?" * len(memory_ids))
        rows = db.execute(
            f"SELECT state, record FROM sessions WHERE memory_id IN ({marks}) AND mode = ?"
            " ORDER BY memory_id, session_key",
            [*memory_ids, mode],
        ).fetchall()
    finally:
        db.close()
    found = [(str(state), SessionRecord.from_json(json.loads(rec))) for state, rec in rows]
    return sorted(found, key=lambda found: (found[1].question_id, found[1].session_index))
