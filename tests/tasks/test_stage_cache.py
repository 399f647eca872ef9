"""StageCache, the one way the flow and the batch tasks read and write the per-question
stages' cached results (lme_bench_tasks.result_cache): what a task kept is found by its key
unless it expired or the task refreshes its cache, and a task that keeps nothing is never
written for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from lme_bench_tasks import benchmark, result_cache
from prefect.filesystems import LocalFileSystem
from prefect.results import ResultStore


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ResultStore:
    found = ResultStore(result_storage=LocalFileSystem(basepath=str(tmp_path)))
    monkeypatch.setattr(result_cache, "_result_store", lambda task: found)
    return found


def _cache(**options: object) -> result_cache.StageCache:
    return result_cache.StageCache(benchmark.judge_question.with_options(**options))


def test_a_kept_result_is_found_by_its_key_and_another_key_misses(store: ResultStore) -> None:
    cache = _cache(persist_result=True)
    cache.keep([("judge-q1-abc", ["row"]), (None, ["no key: not kept"])])
    assert cache.lookup("judge-q1-abc") == (True, ["row"])
    assert cache.lookup("judge-q2-abc") == (False, None)
    assert cache.lookup(None) == (False, None)


def test_an_expired_result_is_a_miss(store: ResultStore) -> None:
    store.write(obj="old", key="judge-q1-old", expiration=datetime.now(UTC) - timedelta(days=1))
    store.write(obj="new", key="judge-q1-new", expiration=datetime.now(UTC) + timedelta(days=1))
    cache = _cache(persist_result=True)
    assert cache.lookup("judge-q1-old") == (False, None)
    assert cache.lookup("judge-q1-new") == (True, "new")


def test_a_task_refreshing_its_cache_or_keeping_nothing_finds_nothing(
    store: ResultStore, tmp_path: Path
) -> None:
    _cache(persist_result=True).keep([("judge-q1-abc", "kept")])
    assert _cache(persist_result=True, refresh_cache=True).lookup("judge-q1-abc") == (False, None)
    assert _cache(persist_result=False).lookup("judge-q1-abc") == (False, None)
    _cache(persist_result=False).keep([("judge-q2-abc", "not kept")])
    assert not (tmp_path / "judge-q2-abc").exists()


def test_each_stages_task_takes_what_the_stage_table_says(tmp_path: Path) -> None:
    """The flow passes a stage's input by the table's name, and the ingestion to the stages the
    table says take it; the cache policy reads them back by the same names."""
    import inspect

    from lme_bench.config.settings import Settings
    from lme_bench.run.stage_table import STAGE_TABLE

    settings = Settings.model_validate({"run": {"results_dir": str(tmp_path)}})
    by_stage = benchmark.per_question_tasks(settings)
    assert list(by_stage) == [spec.name for spec in STAGE_TABLE]
    for spec in STAGE_TABLE:
        parameters = inspect.signature(by_stage[spec.name].fn).parameters
        assert spec.given_as in parameters
        assert ("ingestion_id" in parameters) == spec.takes_ingestion
