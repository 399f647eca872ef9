"""Dense and hybrid search for the embedded store: BM25 blended with vectors by `alpha`.

Per query, over one memory's rows of one source (entries, or context snapshots):

- BM25 candidates: every row FTS5 matches, score b = -bm25 (search_index.py);
- dense candidates: every row, score d = cosine(query vector, row vector);
- each candidate list is min-max normalised to [0, 1]: n(x) = (x - min) / (max - min) over that
  list (all 1.0 when max = min); a row missing from a list gets 0 for it (as Weaviate's
  relativeScoreFusion does);
- hybrid: combined = alpha * n(d) + (1 - alpha) * n(b) over the rows of the lists whose weight
  is positive (alpha = 0: BM25's matches only, in BM25 order; alpha = 1: every row, in dense
  order); ranked by combined descending, ties by the older row (smaller seq) first;
- dense: rows by raw cosine descending, ties older first; the score is the cosine;
- bm25: search_index.MemoryIndexes.rank (FTS5's matches by -bm25).

Every mode then ranks the whole memory: rows a mode left out (bm25's and alpha = 0's
non-matches, or every row of a query with no searchable word) follow the ranked ones, oldest
row (smallest seq) first, with score 0.0, up to the limit (`complete`). So a search always
returns min(limit, rows) rows, as the official flat retrievers and Weaviate's hybrid do.

Entries are embedded by their summary (what Mycelian embeds), contexts by their content.
Embedding is lazy: nothing is embedded at write time (raw ingestion stays fast); the first
dense search of a memory embeds its rows, and later searches embed only rows added since.
Vectors are cached in the store's SQLite file, table `embeddings`, keyed by (model, sha256 of
the text), so identical text (a session shared by many questions) is embedded once per file.
numpy is used when importable (it comes with the dense extra); otherwise pure Python.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from lme_bench.common.sqlite_writes import database_file, immediate, write_lock
from lme_bench.embeddings import MINILM, Embedder, load_embedder, pack, unpack
from lme_bench.reference_memory.search_index import MemoryIndexes

SEARCH_MODES = ("bm25", "dense", "hybrid")
EMBEDDINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, content_sha256 TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model, content_sha256)) WITHOUT ROWID;
"""
_TEXT = {"entries": "summary", "contexts": "content"}
USE_NUMPY = True  # tests switch it off to exercise the pure-Python path
Ranked = list[tuple[int, float]]


def _numpy() -> Any:
    if not USE_NUMPY:
        return None
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def normalise(scores: dict[int, float]) -> dict[int, float]:
    """Min-max to [0, 1] over the candidates; all 1.0 when they are equal."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {seq: (s - low) / (high - low) for seq, s in scores.items()}


def fuse(bm25: Ranked, dense: Ranked, alpha: float, limit: int) -> Ranked:
    """combined = alpha·n(dense) + (1 - alpha)·n(bm25); best first, ties older row first."""
    weighted = [(alpha, normalise(dict(dense))), (1.0 - alpha, normalise(dict(bm25)))]
    combined: dict[int, float] = {}
    for weight, scores in weighted:
        if weight > 0:
            for seq in scores:
                combined[seq] = 0.0
    for seq in combined:
        combined[seq] = sum(w * s.get(seq, 0.0) for w, s in weighted if w > 0)
    return sorted(combined.items(), key=lambda item: (-item[1], item[0]))[:limit]


def by_score(scores: Ranked, limit: int) -> Ranked:
    return sorted(scores, key=lambda item: (-item[1], item[0]))[:limit]


def complete(
    db: sqlite3.Connection, source: str, memory_id: str, ranked: Ranked, limit: int
) -> Ranked:
    """`ranked`, then the memory's other rows oldest first (score 0.0), `limit` rows at most."""
    if len(ranked) >= limit:
        return ranked[:limit]
    seen = {seq for seq, _ in ranked}
    rest = db.execute(
        f"SELECT seq FROM {source} WHERE memory_id = ? ORDER BY seq LIMIT ?",
        (memory_id, limit + len(seen)),
    )
    unranked = [(int(seq), 0.0) for (seq,) in rest if seq not in seen]
    return [*ranked, *unranked][:limit]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class EmbeddingCache:
    """Vectors by (model, sha256(text)) in the store's `embeddings` table; misses embedded."""

    def __init__(self, embedder: Embedder, batch_size: int = 256) -> None:
        self.embedder = embedder
        self.batch_size = batch_size

    def vectors(self, db: sqlite3.Connection, texts: Sequence[str]) -> list[bytes]:
        keys = [sha256(t) for t in texts]
        model = self.embedder.name
        found: dict[str, bytes] = {}
        distinct = list(dict.fromkeys(keys))
        for start in range(0, len(distinct), 500):
            chunk = distinct[start : start + 500]
            found.update(
                db.execute(
                    "SELECT content_sha256, vector FROM embeddings WHERE model = ?"
                    f" AND content_sha256 IN ({','.join('?' * len(chunk))})",
                    [model, *chunk],
                ).fetchall()
            )
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        todo = list(missing.items())
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            vectors = self.embedder.embed([text for _, text in batch])
            blobs = [(key, pack(vector)) for (key, _), vector in zip(batch, vectors, strict=True)]
            with immediate(db, write_lock(database_file(db))):
                db.executemany(
                    "INSERT OR IGNORE INTO embeddings (model, content_sha256, vector)"
                    " VALUES (?, ?, ?)",
                    [(model, key, blob) for key, blob in blobs],
                )
            found.update(blobs)
        return [found[k] for k in keys]


class _Rows:
    """One memory's vectors for one source, in seq order."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.blobs: list[bytes] = []
        self._matrix: Any = None

    def add(self, seqs: Sequence[int], blobs: Sequence[bytes]) -> None:
        self.seqs += seqs
        self.blobs += blobs
        self._matrix = None

    def cosines(self, query: bytes) -> list[float]:
        if not self.seqs:
            return []
        np = _numpy()
        if np is None:
            q = unpack(query)
            rows = [unpack(b) for b in self.blobs]
            return [sum(x * y for x, y in zip(q, row, strict=True)) for row in rows]
        if self._matrix is None:
            joined = b"".join(self.blobs)
            self._matrix = np.frombuffer(joined, dtype="<f4").reshape(len(self.blobs), -1)
        scores = self._matrix @ np.frombuffer(query, dtype="<f4")
        return [float(s) for s in scores]


class DenseIndexes:
    """Per-memory vectors, kept up to date by appending rows added since (rows never change)."""

    def __init__(self, cache: EmbeddingCache, capacity: int = 8) -> None:
        self.cache = cache
        self.capacity = capacity
        self._rows: OrderedDict[tuple[str, str], _Rows] = OrderedDict()
        self._lock = threading.Lock()
        self._last_query: tuple[str, bytes] = ("", b"")

    def _query_vector(self, query: str) -> bytes:
        """The query's vector; the last one is kept (entries and contexts share a query)."""
        if self._last_query[0] != query or not self._last_query[1]:
            (vector,) = self.cache.embedder.embed([query])
            self._last_query = (query, pack(vector))
        return self._last_query[1]

    def _update(self, db: sqlite3.Connection, source: str, memory_id: str) -> _Rows:
        key = (source, memory_id)
        rows = self._rows.get(key) or _Rows()
        last = rows.seqs[-1] if rows.seqs else 0
        new = db.execute(
            f"SELECT seq, {_TEXT[source]} FROM {source} WHERE memory_id = ? AND seq > ?"
            " ORDER BY seq",
            (memory_id, last),
        ).fetchall()
        if new:
            rows.add([int(s) for s, _ in new], self.cache.vectors(db, [t for _, t in new]))
        self._rows[key] = rows
        self._rows.move_to_end(key)
        while len(self._rows) > self.capacity:
            self._rows.popitem(last=False)
        return rows

    def cosine(self, db: sqlite3.Connection, source: str, memory_id: str, query: str) -> Ranked:
        """(seq, cosine) for every row of the memory, in seq order."""
        with self._lock:
            rows = self._update(db, source, memory_id)
            if not rows.seqs:
                return []
            return list(zip(rows.seqs, rows.cosines(self._query_vector(query)), strict=True))


class Searcher:
    """Ranks all of one memory's rows by `mode`: its ranking first, then the rest (`complete`)."""

    def __init__(self, mode: str, alpha: float, embedder: Embedder | None = None) -> None:
        if mode not in SEARCH_MODES:
            raise ValueError(f"unknown search mode {mode!r}; expected one of {SEARCH_MODES}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be within [0, 1], got {alpha}")
        self.mode, self.alpha = mode, alpha
        # load_embedder is cheap (the model loads at the first embed) and fails early without
        # the extra; a bm25 searcher never touches an embedder. `embedder` counts its calls.
        self.embedder: Embedder | None = None
        if mode != "bm25":
            self.embedder = embedder or load_embedder(MINILM)
            self.dense = DenseIndexes(EmbeddingCache(self.embedder))

    def rank(
        self,
        db: sqlite3.Connection,
        bm25: MemoryIndexes,
        source: str,
        memory_id: str,
        query: str,
        limit: int,
    ) -> Ranked:
        if limit <= 0:
            return []
        return complete(
            db, source, memory_id, self._ranked(db, bm25, source, memory_id, query, limit), limit
        )

    def _ranked(
        self,
        db: sqlite3.Connection,
        bm25: MemoryIndexes,
        source: str,
        memory_id: str,
        query: str,
        limit: int,
    ) -> Ranked:
        """The rows `mode` ranks: bm25's matches, every row for dense and alpha > 0."""
        if self.mode == "bm25":
            return bm25.rank(db, source, memory_id, query, limit)
        if self.mode == "dense":
            return by_score(self.dense.cosine(db, source, memory_id, query), limit)
        dense = self.dense.cosine(db, source, memory_id, query) if self.alpha > 0 else []
        lexical: Ranked = []
        if self.alpha < 1:
            (count,) = db.execute(
                f"SELECT count(*) FROM {source} WHERE memory_id = ?", (memory_id,)
            ).fetchone()
            lexical = bm25.rank(db, source, memory_id, query, max(int(count), 1))
        return fuse(lexical, dense, self.alpha, limit)
