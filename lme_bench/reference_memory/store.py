"""The embedded memory store: vaults, memories, entries and context snapshots in one SQLite file.

WAL mode, one connection per thread; search goes through per-memory indexes (search_index.py).
Writes are synchronous, so the store is always consistent; adding an
entry whose raw text, summary and tags equal one already in the memory is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lme_bench.common.sqlite_writes import immediate, keep_open, write_lock
from lme_bench.embeddings import Embedder
from lme_bench.entries.models import (
    ContextHit,
    Entry,
    EntryHit,
    Memory,
    NewEntry,
    SearchResult,
    Vault,
)
from lme_bench.reference_memory.hybrid import EMBEDDINGS_SCHEMA, Searcher
from lme_bench.reference_memory.search_index import MemoryIndexes

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
CREATE INDEX IF NOT EXISTS entries_by_time ON entries (memory_id, creation_time);
"""


_NAMES = re.findall(r"IF NOT EXISTS (\w+)", _SCHEMA + EMBEDDINGS_SCHEMA)
_TICK = timedelta(microseconds=1)


def _schema_present(db: sqlite3.Connection) -> bool:
    """Every table and index of the schema exists and the file has its version."""
    if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        return False
    marks = ",".join("?" * len(_NAMES))
    (found,) = db.execute(f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})", _NAMES)
    return bool(found[0] == len(_NAMES))


def _utc_now() -> datetime:
    return datetime.now(UTC)


def format_rfc3339(moment: datetime) -> str:
    """Fixed-width UTC RFC 3339 with microseconds, so text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (any offset, 'Z' allowed); naive times are taken as UTC."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def now_rfc3339() -> str:
    return format_rfc3339(_utc_now())


def new_entry_ids(count: int) -> list[str]:
    """UUIDs in version 7's layout (milliseconds since the epoch, then random bits): ids made
    one after another sort near each other, so the entry-id index grows at its end instead of
    at a random page per row (which halved the insert rate of a 250k-entry store)."""
    stamp = (time.time_ns() // 1_000_000).to_bytes(6, "big")
    raw = bytearray(os.urandom(16 * count))
    for at in range(0, 16 * count, 16):
        raw[at : at + 6] = stamp
        raw[at + 6] = 0x70 | raw[at + 6] & 0x0F  # version 7
        raw[at + 8] = 0x80 | raw[at + 8] & 0x3F  # RFC 9562 variant
    h = raw.hex()
    return [
        f"{h[i : i + 8]}-{h[i + 8 : i + 12]}-{h[i + 12 : i + 16]}-{h[i + 16 : i + 20]}-"
        + h[i + 20 : i + 32]
        for i in range(0, 32 * count, 32)
    ]


def _stamps(start: datetime, count: int) -> list[str]:
    """format_rfc3339 of start, start + 1 µs, … (formatting each second once)."""
    out: list[str] = []
    while len(out) < count:
        moment = start + len(out) * _TICK
        prefix = format_rfc3339(moment.replace(microsecond=0))[:-7]  # "YYYY-MM-DDTHH:MM:SS."
        first = moment.microsecond
        last = min(1_000_000, first + count - len(out))
        out += [f"{prefix}{micro:06d}Z" for micro in range(first, last)]
    return out


_sorted_json = json.JSONEncoder(sort_keys=True).encode  # = json.dumps(…, sort_keys=True)
_json_string = json.encoder.encode_basestring_ascii  # how json.dumps writes a str


def _tags_json(tags: dict[str, str]) -> str:
    """json.dumps(tags, sort_keys=True), written directly when every value is a string (the
    encoder's set-up per call cost more than encoding four short strings)."""
    try:
        items = [f"{_json_string(key)}: {_json_string(tags[key])}" for key in sorted(tags)]
    except TypeError:  # a value (or key) that is not a string
        return _sorted_json(tags)
    return "{" + ", ".join(items) + "}"


def _content_key(entry: NewEntry, tags_json: str) -> str:
    """sha256 of json.dumps([raw_entry, summary, tags], sort_keys=True), given the tags' JSON
    (built here from the parts: the tags are encoded once per entry, not twice)."""
    raw = _json_string(entry.raw_entry)
    summary = raw if entry.summary is entry.raw_entry else _json_string(entry.summary)
    return hashlib.sha256(f"[{raw}, {summary}, {tags_json}]".encode()).hexdigest()


_ENTRY_COLUMNS = "entry_id, memory_id, raw_entry, summary, tags, creation_time"
_MEMORY_COLUMNS = "memory_id, vault_id, title, memory_type, description, created_at"


def _entry(row: Sequence[Any]) -> Entry:
    return Entry(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])


class NotFoundError(KeyError):
    """An unknown vault, memory or entry id."""


class EmbeddedStore:
    def __init__(
        self,
        path: Path | str,
        *,
        search: str = "bm25",
        alpha: float = 0.6,
        embedder: Embedder | None = None,
    ) -> None:
        """`search`: "bm25" | "dense" | "hybrid" (hybrid.py); `embedder` defaults to MiniLM."""
        self.path = Path(path)
        self.search_mode = search
        self.searcher = Searcher(search, alpha, embedder)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._write_lock = write_lock(self.path)
        db = self._db()
        if not _schema_present(db):  # every task opens the store: reading spares the write lock
            with self._write_lock:
                db.execute("PRAGMA journal_mode = WAL")  # kept by the file for every connection
                db.executescript(
                    f"BEGIN IMMEDIATE; {_SCHEMA} {EMBEDDINGS_SCHEMA}"
                    f" PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
                )
        keep_open(self.path)

    # -- connections -------------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(
                self.path, timeout=60, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            # search indexes (search_index.py) live in temp tables: ~15% faster in memory
            db.execute("PRAGMA temp_store = MEMORY")
            self._local.db = db
            with self._lock:
                self._all.append(db)
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with immediate(self._db(), self._write_lock) as db:
            yield db

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

    def list_vaults(self) -> list[Vault]:
        rows = self._db().execute(
            "SELECT vault_id, title, description, created_at FROM vaults ORDER BY created_at, title"
        )
        return [Vault(*row) for row in rows]

    def list_memories(self, vault_id: str) -> list[Memory]:
        db = self._db()
        if not db.execute("SELECT 1 FROM vaults WHERE vault_id = ?", (vault_id,)).fetchone():
            raise NotFoundError(f"vault {vault_id} not found")
        rows = db.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE vault_id = ? ORDER BY created_at, title",
            (vault_id,),
        )
        return [Memory(*row) for row in rows]

    def get_memory(self, vault_id: str, memory_id: str) -> Memory:
        row = (
            self._db()
            .execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE vault_id = ? AND memory_id = ?",
                (vault_id, memory_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFoundError(f"memory {memory_id} not found in vault {vault_id}")
        return Memory(*row)

    # -- entries -----------------------------------------------------------------------------
    def add_entries(self, memory_id: str, entries: Sequence[NewEntry]) -> int:
        """Store entries in order; returns how many were new.

        Creation times strictly increase within a memory, so time-based paging never skips.
        """
        with self._tx() as db:
            return self._insert_entries(db, memory_id, entries)

    def store_writes(
        self, entries: Sequence[tuple[str, NewEntry]], contexts: Sequence[tuple[str, str]] = ()
    ) -> None:
        """Entries and context documents of any memories, in one transaction (all or none);
        each memory's entries in the order given."""
        by_memory: dict[str, list[NewEntry]] = {}
        for memory_id, entry in entries:
            by_memory.setdefault(memory_id, []).append(entry)
        with self._tx() as db:
            for memory_id, batch in by_memory.items():
                self._insert_entries(db, memory_id, batch)
            for memory_id, content in contexts:
                self._insert_context(db, memory_id, content)

    def _insert_entries(
        self, db: sqlite3.Connection, memory_id: str, entries: Sequence[NewEntry]
    ) -> int:
        self._check_memory(db, memory_id)
        (last,) = db.execute(
            "SELECT max(creation_time) FROM entries WHERE memory_id = ?", (memory_id,)
        ).fetchone()
        stamp = _utc_now()
        if last is not None:
            stamp = max(stamp, parse_rfc3339(last) + _TICK)
        # One tick per entry given: an entry already held (ignored) leaves a gap, so creation
        # times still strictly increase.
        tags = [_tags_json(e.tags) for e in entries]
        cursor = db.executemany(
            "INSERT OR IGNORE INTO entries (entry_id, memory_id, raw_entry, summary, tags,"
            " creation_time, content_key) VALUES (?, ?, ?, ?, ?, ?, ?)",
            zip(
                new_entry_ids(len(entries)),
                [memory_id] * len(entries),
                [e.raw_entry for e in entries],
                [e.summary for e in entries],
                tags,
                _stamps(stamp, len(entries)),
                [_content_key(e, t) for e, t in zip(entries, tags, strict=True)],
                strict=True,
            ),
        )
        return cursor.rowcount  # summed over the rows; 0 for an ignored one

    def count_entries(self, memory_id: str) -> int:
        row = (
            self._db()
            .execute("SELECT count(*) FROM entries WHERE memory_id = ?", (memory_id,))
            .fetchone()
        )
        return int(row[0])

    def entry_tags(self, memory_id: str) -> list[dict[str, str]]:
        """Every entry's tags, oldest first (cheaper than list_entries: no text)."""
        rows = self._db().execute(
            "SELECT tags FROM entries WHERE memory_id = ? ORDER BY seq", (memory_id,)
        )
        return [json.loads(tags) for (tags,) in rows]

    def list_entries(
        self,
        memory_id: str,
        limit: int | None = None,
        before: str | None = None,
        after: str | None = None,
    ) -> list[Entry]:
        """Entries oldest first; with a limit, the newest `limit` ones (before/after a time)."""
        clauses, args = ["memory_id = ?"], [memory_id]
        if before is not None:
            clauses.append("creation_time < ?")
            args.append(format_rfc3339(parse_rfc3339(before)))
        if after is not None:
            clauses.append("creation_time > ?")
            args.append(format_rfc3339(parse_rfc3339(after)))
        where = " AND ".join(clauses)
        if limit is None:
            sql = f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE {where} ORDER BY seq"
        elif after is not None:  # the oldest `limit` entries after the time: paging forward
            sql = f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE {where} ORDER BY seq LIMIT {limit:d}"
        else:
            sql = (
                f"SELECT * FROM (SELECT {_ENTRY_COLUMNS}, seq FROM entries WHERE {where}"
                f" ORDER BY seq DESC LIMIT {limit:d}) ORDER BY seq"
            )
        rows = self._db().execute(sql, args).fetchall()
        return [_entry(row) for row in rows]

    def get_entry(self, memory_id: str, entry_id: str) -> Entry:
        row = (
            self._db()
            .execute(
                f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE memory_id = ? AND entry_id = ?",
                (memory_id, entry_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFoundError(f"entry {entry_id} not found in memory {memory_id}")
        return _entry(row)

    # -- contexts ----------------------------------------------------------------------------
    def put_context(self, memory_id: str, content: str) -> None:
        with self._tx() as db:
            self._insert_context(db, memory_id, content)

    def _insert_context(self, db: sqlite3.Connection, memory_id: str, content: str) -> None:
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

    def search(
        self, memory_id: str, query: str, top_ke: int = 5, top_kc: int = 2, include_raw: bool = True
    ) -> SearchResult:
        """The memory's entries and context snapshots by `search_mode`, best first: every row
        is ranked (rows the mode does not score follow, oldest first; hybrid.complete)."""
        db = self._db()
        self._check_memory(db, memory_id)
        indexes = self._local.__dict__.setdefault("indexes", MemoryIndexes())
        entries: list[EntryHit] = []
        contexts: list[ContextHit] = []
        if top_ke > 0:
            ranked = self.searcher.rank(db, indexes, "entries", memory_id, query, top_ke)
            rows = {
                r[0]: r
                for r in db.execute(
                    "SELECT seq, entry_id, summary, raw_entry, creation_time, tags FROM entries"
                    f" WHERE seq IN ({','.join('?' * len(ranked))})",
                    [seq for seq, _ in ranked],
                )
            }
            # every hit's tags in one parse: a JSON array of the stored objects
            tags = json.loads("[" + ",".join(rows[seq][5] for seq, _ in ranked) + "]")
            entries = [
                EntryHit(
                    entry_id=rows[seq][1],
                    summary=rows[seq][2],
                    raw_entry=rows[seq][3] if include_raw else None,
                    score=score,
                    creation_time=rows[seq][4],
                    tags=found,
                )
                for (seq, score), found in zip(ranked, tags, strict=True)
            ]
        if top_kc > 0:
            ranked = self.searcher.rank(db, indexes, "contexts", memory_id, query, top_kc)
            rows = {
                r[0]: r
                for r in db.execute(
                    "SELECT seq, content, created_at FROM contexts"
                    f" WHERE seq IN ({','.join('?' * len(ranked))})",
                    [seq for seq, _ in ranked],
                )
            }
            contexts = [ContextHit(rows[seq][1], rows[seq][2], score) for seq, score in ranked]
        latest = self.latest_context(memory_id)
        return SearchResult(
            entries=entries,
            contexts=contexts,
            latest_context=latest[0] if latest else None,
            latest_context_timestamp=latest[1] if latest else None,
            mode=self.search_mode,
        )
