"""The embedded memory store: vaults, memories, entries and context snapshots in one SQLite file.

WAL mode, one connection per thread. Search is FTS5 BM25 over one memory at a time: each
connection builds an in-memory FTS5 index of a memory's entries (and one of its context
snapshots) when first searched and rebuilds it only after that memory changes. Per-memory
indexes keep BM25's document statistics to that memory, so a question's ranking never depends on
what else the file holds. Writes are synchronous, so the store is always consistent; adding an
entry whose raw text, summary and tags equal one already in the memory is a no-op.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from lme_bench.memory.text_search import fts_or_query, query_terms
from lme_bench.memory.types import ContextHit, Entry, EntryHit, NewEntry, SearchResult

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vaults (
    vault_id TEXT PRIMARY KEY, title TEXT NOT NULL UNIQUE, description TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    memory_id TEXT PRIMARY KEY, vault_id TEXT NOT NULL REFERENCES vaults(vault_id),
    title TEXT NOT NULL, memory_type TEXT NOT NULL, description TEXT NOT NULL,
    created_at TEXT NOT NULL, UNIQUE (vault_id, title));
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY, entry_id TEXT NOT NULL UNIQUE,
    memory_id TEXT NOT NULL REFERENCES memories(memory_id),
    raw_entry TEXT NOT NULL, summary TEXT NOT NULL, tags TEXT NOT NULL,
    creation_time TEXT NOT NULL, content_key TEXT NOT NULL, UNIQUE (memory_id, content_key));
CREATE TABLE IF NOT EXISTS contexts (
    seq INTEGER PRIMARY KEY, memory_id TEXT NOT NULL REFERENCES memories(memory_id),
    content TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS contexts_by_memory ON contexts (memory_id, seq);
"""
_TOKENIZER = "tokenize = 'porter unicode61 remove_diacritics 2'"
_CACHED_INDEXES = 8  # per-memory search indexes kept per connection
_INDEXED = {"entries": "summary, raw_entry", "contexts": "content"}
_index_names = itertools.count()


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _content_key(entry: NewEntry) -> str:
    payload = json.dumps([entry.raw_entry, entry.summary, entry.tags], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


class NotFoundError(KeyError):
    """An unknown vault, memory or entry id."""


class EmbeddedStore:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        db = self._db()
        db.executescript(
            f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        )

    # -- connections -------------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(
                self.path, timeout=60, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            self._local.db = db
            with self._lock:
                self._all.append(db)
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for db in self._all:
                db.close()
            self._all.clear()
        self._local = threading.local()

    # -- vaults and memories -----------------------------------------------------------------
    def get_or_create_vault(self, title: str, description: str = "") -> str:
        with self._tx() as db:
            row = db.execute("SELECT vault_id FROM vaults WHERE title = ?", (title,)).fetchone()
            if row:
                return str(row[0])
            vault_id = str(uuid.uuid4())
            db.execute(
                "INSERT INTO vaults VALUES (?, ?, ?, ?)",
                (vault_id, title, description, now_rfc3339()),
            )
            return vault_id

    def get_or_create_memory(
        self, vault_id: str, title: str, memory_type: str = "CHAT", description: str = ""
    ) -> str:
        with self._tx() as db:
            if not db.execute("SELECT 1 FROM vaults WHERE vault_id = ?", (vault_id,)).fetchone():
                raise NotFoundError(f"vault {vault_id} not found")
            row = db.execute(
                "SELECT memory_id FROM memories WHERE vault_id = ? AND title = ?", (vault_id, title)
            ).fetchone()
            if row:
                return str(row[0])
            memory_id = str(uuid.uuid4())
            db.execute(
                "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?)",
                (memory_id, vault_id, title, memory_type, description, now_rfc3339()),
            )
            return memory_id

    def _check_memory(self, db: sqlite3.Connection, memory_id: str) -> None:
        if not db.execute("SELECT 1 FROM memories WHERE memory_id = ?", (memory_id,)).fetchone():
            raise NotFoundError(f"memory {memory_id} not found")

    # -- entries -----------------------------------------------------------------------------
    def add_entries(self, memory_id: str, entries: Sequence[NewEntry]) -> int:
        """Store entries in order; returns how many were new."""
        added = 0
        with self._tx() as db:
            self._check_memory(db, memory_id)
            for entry in entries:
                cur = db.execute(
                    "INSERT OR IGNORE INTO entries (entry_id, memory_id, raw_entry, summary, tags,"
                    " creation_time, content_key) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        str(uuid.uuid4()),
                        memory_id,
                        entry.raw_entry,
                        entry.summary,
                        json.dumps(entry.tags, sort_keys=True),
                        now_rfc3339(),
                        _content_key(entry),
                    ),
                )
                added += cur.rowcount
        return added

    def count_entries(self, memory_id: str) -> int:
        row = (
            self._db()
            .execute("SELECT count(*) FROM entries WHERE memory_id = ?", (memory_id,))
            .fetchone()
        )
        return int(row[0])

    def list_entries(self, memory_id: str) -> list[Entry]:
        rows = (
            self._db()
            .execute(
                "SELECT entry_id, memory_id, raw_entry, summary, tags, creation_time FROM entries"
                " WHERE memory_id = ? ORDER BY seq",
                (memory_id,),
            )
            .fetchall()
        )
        return [Entry(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]

    # -- contexts ----------------------------------------------------------------------------
    def put_context(self, memory_id: str, content: str) -> None:
        with self._tx() as db:
            self._check_memory(db, memory_id)
            db.execute(
                "INSERT INTO contexts (memory_id, content, created_at) VALUES (?, ?, ?)",
                (memory_id, content, now_rfc3339()),
            )

    def latest_context(self, memory_id: str) -> tuple[str, str] | None:
        row = (
            self._db()
            .execute(
                "SELECT content, created_at FROM contexts WHERE memory_id = ? ORDER BY seq DESC"
                " LIMIT 1",
                (memory_id,),
            )
            .fetchone()
        )
        return (str(row[0]), str(row[1])) if row else None

    # -- search ------------------------------------------------------------------------------
    def _memory_index(self, db: sqlite3.Connection, source: str, memory_id: str) -> str:
        """Name of this connection's FTS5 index of one memory's `source` rows, built if stale."""
        columns = _INDEXED[source]
        version = db.execute(
            f"SELECT count(*), coalesce(max(seq), 0) FROM {source} WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
        cache: OrderedDict[tuple[str, str], tuple[str, tuple[int, int]]] = (
            self._local.__dict__.setdefault("indexes", OrderedDict())
        )
        key = (source, memory_id)
        cached = cache.get(key)
        if cached and cached[1] == tuple(version):
            cache.move_to_end(key)
            return cached[0]
        if cached:
            name = cached[0]
            db.execute(f"DELETE FROM {name}")
        else:
            name = f"memory_index_{next(_index_names)}"
            db.execute(f"CREATE VIRTUAL TABLE temp.{name} USING fts5({columns}, {_TOKENIZER})")
        db.execute(
            f"INSERT INTO {name} (rowid, {columns}) SELECT seq, {columns} FROM {source}"
            " WHERE memory_id = ?",
            (memory_id,),
        )
        cache[key] = (name, (int(version[0]), int(version[1])))
        cache.move_to_end(key)
        while len(cache) > _CACHED_INDEXES:
            _, (old, _) = cache.popitem(last=False)
            db.execute(f"DROP TABLE temp.{old}")
        return name

    def search(
        self, memory_id: str, query: str, top_ke: int = 5, top_kc: int = 2, include_raw: bool = True
    ) -> SearchResult:
        """BM25 over the memory's entries and context snapshots; best first, score = -bm25."""
        db = self._db()
        self._check_memory(db, memory_id)
        match = fts_or_query(query_terms(query))
        entries: list[EntryHit] = []
        contexts: list[ContextHit] = []
        if match and top_ke > 0:
            index = self._memory_index(db, "entries", memory_id)
            rows = db.execute(
                "SELECT e.entry_id, e.summary, e.raw_entry, e.creation_time, e.tags, i.rank"
                f" FROM (SELECT rowid, bm25({index}) AS rank FROM {index} WHERE {index} MATCH ?"
                " ORDER BY rank LIMIT ?) i JOIN entries e ON e.seq = i.rowid"
                " ORDER BY i.rank, e.seq",
                (match, top_ke),
            ).fetchall()
            entries = [
                EntryHit(
                    r[0], r[1], r[2] if include_raw else None, -float(r[5]), r[3], json.loads(r[4])
                )
                for r in rows
            ]
        if match and top_kc > 0:
            index = self._memory_index(db, "contexts", memory_id)
            rows = db.execute(
                "SELECT c.content, c.created_at, i.rank"
                f" FROM (SELECT rowid, bm25({index}) AS rank FROM {index} WHERE {index} MATCH ?"
                " ORDER BY rank LIMIT ?) i JOIN contexts c ON c.seq = i.rowid"
                " ORDER BY i.rank, c.seq DESC",
                (match, top_kc),
            ).fetchall()
            contexts = [ContextHit(r[0], r[1], -float(r[2])) for r in rows]
        latest = self.latest_context(memory_id)
        return SearchResult(
            entries=entries,
            contexts=contexts,
            latest_context=latest[0] if latest else None,
            latest_context_timestamp=latest[1] if latest else None,
        )
