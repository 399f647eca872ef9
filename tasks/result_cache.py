"""The per-question stages' cached results: their keys, the one way to read and write them
outside a task run (StageCache), and one thread-safe in-memory cache for the run's records.

The flow asks StageCache before submitting a stage: reading a record costs about a millisecond,
a Cached task run twenty and a server write, so a cache hit makes no task run. Batch tasks keep
each question's result through it under the key the stage's own task would use.

Prefect keeps each flow run's result records in one LRU cache (cachetools), shared by the
result store of every task the run makes and not thread-safe. The per-question tasks run on
up to 128 threads, and each commits its result through that cache (Prefect's transaction
commit, outside any lock of ours): once a run had stored more results than the cache holds
(1,000; a LoCoMo run has ~8,000), two commits evicting at once failed with a KeyError or
`OrderedDict mutated during iteration`, which Prefect logs as "An error was encountered while
committing transaction '…'" and swallows, rolling the transaction back (the record's file was
written just before; the question counts as done).

Here the flow run's store gets a cache whose every operation holds one lock and which is big
enough never to evict within a run (between Prefect's `key in cache` and `cache[key]` another
thread's eviction would raise all the same); its records hold the results the flow holds anyway.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from cachetools import LRUCache
from prefect import Task
from prefect.context import FlowRunContext
from prefect.filesystems import LocalFileSystem
from prefect.results import ResultStore, get_result_store
from prefect.settings import PREFECT_TASKS_REFRESH_CACHE

from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.run import cache_keys

ENTRIES = 10_000_000  # per flow run: more results than any run makes
WRITES_AT_ONCE = 8  # a batch's results kept at once (StageCache.keep)


class LockedCache(LRUCache[str, Any]):
    """An LRU cache whose every look-up, write and eviction holds one lock."""

    def __init__(self, maxsize: int = ENTRIES) -> None:
        super().__init__(maxsize)
        self._lock = threading.RLock()

    def __getitem__(self, key: str) -> Any:
        with self._lock:
            return super().__getitem__(key)

    def __setitem__(self, key: str, value: Any) -> None:
        with self._lock:
            super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        with self._lock:
            super().__delitem__(key)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return super().get(key, default)

    def pop(self, key: str, *default: Any) -> Any:
        with self._lock:
            return super().pop(key, *default)

    def popitem(self) -> tuple[str, Any]:
        with self._lock:
            return super().popitem()


def lock_the_result_cache() -> None:
    """Give the current flow run's result store (and so every task's store made from it
    after) a LockedCache holding what its cache held; nothing outside a flow run."""
    context = FlowRunContext.get()
    store = getattr(context, "result_store", None)
    if store is None or isinstance(store.cache, LockedCache):
        return
    locked = LockedCache()
    for key, value in list(store.cache.items()):
        locked[key] = value
    store.cache = locked


def stage_key(
    stage: str,
    ref: QuestionRef,
    settings: Settings,
    scope: str,
    upstream: Any,
    ingestion_id: str | None = None,
) -> str | None:
    """The cache key of a per-question stage's result (see lme_bench.run.cache_keys)."""
    if stage == "ingest" and "ingest" not in settings.stages:
        return None  # only looks the memory up: nothing worth keeping
    return cache_keys.stage_key(stage, ref, settings, scope, upstream, ingestion_id)


_STORE_LOCK = threading.Lock()
"""Result stores made for a task share one in-memory LRU cache, which is not thread-safe: a
batch thread writing while another writes or the flow reads could fail with a KeyError once the
cache is full (runs of more than about a thousand results per stage)."""


def _result_store(task: Task[Any, Any]) -> ResultStore:
    return cast(ResultStore, get_result_store().update_for_task(task, _sync=True))  # type: ignore[call-arg]


class StageCache:
    """The results `task` (a per-question stage's task) keeps, read and written by key."""

    def __init__(self, task: Task[Any, Any]) -> None:
        self.task = task

    def lookup(self, key: str | None) -> tuple[bool, Any]:
        """(True, result) when the task kept a result under `key` that has not expired."""
        task = self.task
        refresh = task.refresh_cache or PREFECT_TASKS_REFRESH_CACHE.value()
        if key is None or not task.persist_result or refresh:
            return False, None
        store = _result_store(task)
        # a miss (every question of a new run) costs a stat, not Prefect's path resolution
        local = store.result_storage
        if (
            isinstance(local, LocalFileSystem)
            and local.basepath
            and store.metadata_storage is None
            and not (Path(local.basepath).expanduser() / key).exists()
        ):
            return False, None
        # a store whose records' cache is the flow run's LockedCache reads in parallel
        lock = contextlib.nullcontext() if isinstance(store.cache, LockedCache) else _STORE_LOCK
        try:
            with lock:
                record = store.read(key)
        except Exception:  # no record, or one that cannot be read: run the task
            return False, None
        expiration = record.metadata.expiration
        if expiration is not None and expiration <= datetime.now(UTC):
            return False, None
        return True, record.result

    def keep(self, results: list[tuple[str | None, Any]]) -> None:
        """Persist each (key, value) as the task would have (nothing when it keeps none):
        WRITES_AT_ONCE at a time where the store's records' cache is the flow run's
        LockedCache (a write to an object store is mostly waiting on it), else one writer at
        a time (see _STORE_LOCK)."""
        if not self.task.persist_result:
            return
        store = _result_store(self.task)
        kept = [(key, value) for key, value in results if key is not None]
        if not isinstance(store.cache, LockedCache):
            for key, value in kept:
                with _STORE_LOCK:
                    store.write(obj=value, key=key)
            return
        with concurrent.futures.ThreadPoolExecutor(max_workers=WRITES_AT_ONCE) as pool:
            written = [pool.submit(store.write, obj=value, key=key) for key, value in kept]
            for future in written:
                future.result()
