"""A task cache at a URL: the stages' tasks get its storage block saved and as itself, so a cache
look-up or a task's result store never asks the Prefect server for the block again (given by
its slug, the block was loaded from the server at every use: a request per look-up, most of a
cached S3 run's collection time)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest
from lme_bench_tasks import benchmark, result_cache
from prefect import flow
from prefect.blocks.core import Block
from prefect.filesystems import RemoteFileSystem
from prefect.testing.utilities import prefect_test_harness

from lme_bench.config.settings import Settings

pytestmark = pytest.mark.slow  # a Prefect server (the test harness)


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


@flow
def _keep_and_look_up(results_dir: str, url: str) -> dict[str, Any]:
    settings = Settings.model_validate(
        {"run": {"results_dir": results_dir}, "cache": {"storage": url}}
    )
    task = benchmark.per_question_tasks(settings)["retrieval"]
    cache = result_cache.StageCache(task)
    cache.keep([("retrieval-q1-abc", ["kept"])])
    return {
        "storage": task.result_storage,
        "hit": cache.lookup("retrieval-q1-abc"),
        "miss": cache.lookup("retrieval-q2-abc"),
    }


def test_cache_look_ups_at_a_url_load_no_block_from_the_server(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"memory://lme-bench-remote-{tmp_path.name}/cache"
    loaded: list[Any] = []
    load = Block.load.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Block], *args: Any, **kwargs: Any) -> Any:
        loaded.append(args[:1])
        return load(cls, *args, **kwargs)

    monkeypatch.setattr(Block, "load", classmethod(counted))
    found = _keep_and_look_up(str(tmp_path), url)
    assert found["hit"] == (True, ["kept"])
    assert found["miss"] == (False, None)
    assert loaded == []  # no block read from the server, for the write or either look-up
    storage = found["storage"]
    assert isinstance(storage, RemoteFileSystem) and storage.basepath == url
    assert storage._block_document_id is not None  # saved, as Prefect wants a task's storage
    memory = fsspec.filesystem("memory")
    assert memory.exists(f"{url.removeprefix('memory://')}/retrieval-q1-abc")
