"""Per-memory search indexes: FTS5 BM25 over one memory's entries or context snapshots.

Each connection builds an in-memory (temp) FTS5 index of a memory's rows when the memory is
first searched, and rebuilds it only after that memory changes (rows are append-only, so the
row count and the last row id tell). Per-memory indexes keep BM25's document statistics to that
memory, so a question's ranking never depends on what else the file holds.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections import OrderedDict

from lme_bench.reference_memory.text_search import fts_or_query, query_terms

_TOKENIZER = "tokenize = 'porter unicode61 remove_diacritics 2'"
_INDEXED = {"entries": "summary, raw_entry", "contexts": "content"}
_names = itertools.count()


class MemoryIndexes:
    """One connection's cache of per-memory FTS5 indexes (least recently used dropped first)."""

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = capacity
        self._cache: OrderedDict[tuple[str, str], tuple[str, tuple[int, int]]] = OrderedDict()

    def _index(self, db: sqlite3.Connection, source: str, memory_id: str) -> str:
        columns = _INDEXED[source]
        count, last = db.execute(
            f"SELECT count(*), coalesce(max(seq), 0) FROM {source} WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
        version = (int(count), int(last))
        key = (source, memory_id)
        cached = self._cache.get(key)
        if cached and cached[1] == version:
            self._cache.move_to_end(key)
            return cached[0]
        if cached:
            name = cached[0]
            db.execute(f"DELETE FROM {name}")
        else:
            name = f"memory_index_{next(_names)}"
            db.execute(f"CREATE VIRTUAL TABLE temp.{name} USING fts5({columns}, {_TOKENIZER})")
        db.execute(
            f"INSERT INTO {name} (rowid, {columns}) SELECT seq, {columns} FROM {source}"
            " WHERE memory_id = ?",
            (memory_id,),
        )
        self._cache[key] = (name, version)
        self._cache.move_to_end(key)
        while len(self._cache) > self.capacity:
            _, (old, _) = self._cache.popitem(last=False)
            db.execute(f"DROP TABLE temp.{old}")
        return name

    def rank(
        self, db: sqlite3.Connection, source: str, memory_id: str, query: str, limit: int
    ) -> list[tuple[int, float]]:
        """(row seq, score) best first; score = -bm25, so higher is better. Ties: older first."""
        match = fts_or_query(query_terms(query))
        if not match or limit <= 0:
            return []
        name = self._index(db, source, memory_id)
        rows = db.execute(
            f"SELECT rowid, rank FROM {name} WHERE {name} MATCH ? ORDER BY rank, rowid LIMIT ?",
            (match, limit),
        ).fetchall()
        return [(int(seq), -float(rank)) for seq, rank in rows]
