"""The LangGraph stores behind the `langgraph` backend, shared within a process.

lme-bench builds one backend object per stage of a question, so the store outlives them:
- `memory`: one `InMemoryStore` per backend data folder, kept in this module for the life of
  the process (ingestion and search use different backend objects, in different threads of
  the flow). It is gone when the process ends.
- `sqlite`: one `SqliteStore` per database file while any backend object uses it, over a
  single connection (the store's own lock serialises its transactions).

Both index the turn text (`text`) and LangMem's memory text (`content.content`) with the
configured embedder. Its calls are counted for whichever backend call is running: each
backend method sets `EMBEDDING_COUNT` (a context variable, which follows the call into the
worker threads that embed).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from langgraph.store.base import BaseStore, IndexConfig, Op, Result
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from lme_bench.embeddings import Embedder

StoreKind = Literal["memory", "sqlite"]
INDEXED_FIELDS = ["text", "content.content"]  # a stored turn's text; a LangMem memory's text
DATABASE_NAME = "langgraph-store.sqlite"


class EmbeddingCount:
    """Embedding calls and texts of one backend object (thread-safe)."""

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0
        self._lock = threading.Lock()

    def add(self, texts: int) -> None:
        with self._lock:
            self.calls += 1
            self.texts += texts


EMBEDDING_COUNT: ContextVar[EmbeddingCount | None] = ContextVar("EMBEDDING_COUNT", default=None)


@contextmanager
def counting(count: EmbeddingCount) -> Iterator[None]:
    """Embedding calls made within this block are added to `count`."""
    token = EMBEDDING_COUNT.set(count)
    try:
        yield
    finally:
        EMBEDDING_COUNT.reset(token)


def counted_embed(embedder: Embedder) -> Any:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        count = EMBEDDING_COUNT.get()
        if count is not None:
            count.add(len(texts))
        return [[float(x) for x in vector] for vector in embedder.embed(list(texts))]

    return embed


class ThreadSafeInMemoryStore(InMemoryStore):
    """InMemoryStore reads and writes plain dicts unguarded, and the flow's tasks run in several
    threads: its steps that touch them (never an await) hold one lock."""

    def __init__(self, *, index: IndexConfig | None = None) -> None:
        super().__init__(index=index)
        self._lock = threading.Lock()

    def _prepare_ops(self, ops: Iterable[Op]) -> Any:
        with self._lock:
            return super()._prepare_ops(ops)

    def _insertinmem_store(self, to_embed: Any, embeddings: list[list[float]]) -> None:
        with self._lock:
            super()._insertinmem_store(to_embed, embeddings)

    def _apply_put_ops(self, put_ops: Any) -> None:
        with self._lock:
            super()._apply_put_ops(put_ops)


class ThreadedSqliteStore(SqliteStore):
    """SqliteStore's async calls raise NotImplementedError (it is synchronous); LangMem's manager
    and this backend are async, so each batch runs in a worker thread instead."""

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))


def _sqlite_store(path: Path, index: dict[str, Any]) -> ThreadedSqliteStore:
    # This machine's Python is built without loadable SQLite extensions, and SqliteStore needs
    # sqlite-vec for its vector index: pysqlite3-binary brings an SQLite that can load it.
    import pysqlite3

    connection = pysqlite3.connect(
        str(path), check_same_thread=False, isolation_level=None, timeout=60
    )
    connection.execute("PRAGMA journal_mode=WAL")
    # SqliteStore takes the indexed paths from "text_fields", not "fields" as documented;
    # without it every item is embedded whole (its session key, date and role included).
    store = ThreadedSqliteStore(
        connection, index=cast(Any, {**index, "text_fields": INDEXED_FIELDS})
    )
    store.setup()
    return store


@dataclass
class _Shared:
    store: BaseStore
    users: int = 0


_SHARED: dict[tuple[StoreKind, Path], _Shared] = {}
_SHARED_LOCK = threading.Lock()


def acquire_store(kind: StoreKind, data_dir: Path, embedder: Embedder) -> BaseStore:
    """The process's store of this kind for `data_dir` (built at first use)."""
    place = (kind, data_dir.resolve())
    with _SHARED_LOCK:
        shared = _SHARED.get(place)
        if shared is None:
            index: IndexConfig = {
                "dims": embedder.dim,
                "embed": counted_embed(embedder),
                "fields": INDEXED_FIELDS,
            }
            if kind == "memory":
                store: BaseStore = ThreadSafeInMemoryStore(index=index)
            else:
                data_dir.mkdir(parents=True, exist_ok=True)
                store = _sqlite_store(data_dir / DATABASE_NAME, dict(index))
            shared = _SHARED[place] = _Shared(store)
        shared.users += 1
        return shared.store


def release_store(kind: StoreKind, data_dir: Path) -> None:
    """One user fewer; a SQLite store is closed with its last user. An in-memory store stays,
    since it is the memory."""
    place = (kind, data_dir.resolve())
    with _SHARED_LOCK:
        shared = _SHARED.get(place)
        if shared is None:
            return
        shared.users -= 1
        if kind == "sqlite" and shared.users <= 0:
            del _SHARED[place]
            cast(SqliteStore, shared.store).conn.close()
