"""Batch threads persisting results into one result store while the flow reads it: the store's
in-memory LRU cache is shared and not thread-safe, so writes and reads past its size must go
through the lock in lme_bench_tasks.result_cache, or a look-up fails with a KeyError."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cachetools import LRUCache
from lme_bench_tasks import benchmark, result_cache
from prefect.filesystems import LocalFileSystem
from prefect.results import ResultStore

WRITERS, READERS, WRITES_EACH, CACHE_SIZE = 6, 4, 100, 16


class InterruptedCache(LRUCache[str, Any]):
    """Prefect's cache, handing the interpreter to other threads between a look-up's
    membership test and its read, and between choosing the entry to evict and evicting it:
    where a thread switch can fall anyway, made likely rather than rare."""

    def __contains__(self, key: object) -> bool:
        found = super().__contains__(key)
        time.sleep(0)
        return found

    def popitem(self) -> tuple[str, Any]:
        oldest = next(iter(self._LRUCache__order))  # type: ignore[attr-defined]
        time.sleep(0)
        return oldest, self.pop(oldest)


def test_writes_and_reads_past_the_cache_size_never_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(
        result_storage=LocalFileSystem(basepath=str(tmp_path)),
        cache=InterruptedCache(maxsize=CACHE_SIZE),
    )
    monkeypatch.setattr(result_cache, "_result_store", lambda task: store)
    cache = result_cache.StageCache(benchmark.answer_question.with_options(persist_result=True))
    # what the readers look up, evicted and read back meanwhile
    cache.keep([(f"seed-{n}", n) for n in range(CACHE_SIZE)])
    errors: list[BaseException] = []
    found: list[Any] = []
    writing = threading.Event()

    def write(writer: int) -> None:
        try:
            for n in range(WRITES_EACH):
                cache.keep([(f"w{writer}-{n}", n)])
        except BaseException as error:
            errors.append(error)

    def read() -> None:
        try:
            while writing.is_set():
                for n in range(CACHE_SIZE):
                    hit, value = cache.lookup(f"seed-{n}")
                    if hit:
                        found.append(value)
        except BaseException as error:
            errors.append(error)

    writing.set()
    readers = [threading.Thread(target=read) for _ in range(READERS)]
    writers = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in readers + writers:
        thread.start()
    for thread in writers:
        thread.join()
    writing.clear()
    for thread in readers:
        thread.join()

    assert errors == []
    assert found and set(found) <= set(range(CACHE_SIZE))
    assert len(store.cache) == CACHE_SIZE
