"""The cache the per-question tasks commit their results through, taken from a real flow run:
commits past its size from many threads at once never fail (Prefect's own, shared by every
task's store and not thread-safe, failed them: "An error was encountered while committing
transaction …", with nothing of its cause)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lme_bench_tasks import benchmark, result_cache
from prefect import flow
from prefect.testing.utilities import prefect_test_harness

from lme_bench.config.settings import Settings

THREADS, WRITES_EACH = 8, 20_000  # past Prefect's 1,000 entries many times over


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


@flow
def _task_caches(results_dir: str) -> list[Any]:
    """The caches the stages' tasks commit through, made as the flow makes its tasks."""
    settings = Settings.model_validate({"run": {"results_dir": results_dir}})
    stages = benchmark.per_question_tasks(settings)
    return [result_cache._result_store(task).cache for task in stages.values()]


def test_commits_from_many_threads_past_the_cache_size_never_fail(
    harness: None, tmp_path: Path
) -> None:
    caches = _task_caches(str(tmp_path))
    cache = caches[0]
    assert all(c is cache for c in caches)  # one cache for every stage's store
    errors: list[BaseException] = []

    def commit(thread: int) -> None:  # what a commit and a cache look-up do to it
        try:
            for n in range(WRITES_EACH):
                cache[f"{thread}-{n}"] = n
                earlier = f"{thread}-{n - 500}"
                if earlier in cache:
                    assert cache[earlier] == n - 500
        except BaseException as error:
            errors.append(error)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads interleave where they would on a busy machine
    try:
        threads = [threading.Thread(target=commit, args=(t,)) for t in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    assert errors == []
    assert len(cache) == THREADS * WRITES_EACH
