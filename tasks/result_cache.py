"""One thread-safe in-memory cache for the run's task results.

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

import threading
from typing import Any

from cachetools import LRUCache
from prefect.context import FlowRunContext

ENTRIES = 10_000_000  # per flow run: more results than any run makes


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
