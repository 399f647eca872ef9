"""A memory build made on one worker, used on another sharing no disk: through a build store in
a local folder and on a real S3 server (SeaweedFS on loopback)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import Settings, load_settings
from lme_bench.qa.panel import qa_panel
from lme_bench.results.store import RunStore
from lme_bench.run import steps
from lme_bench.run.builds import MemoryBuildError
from tests.s3_server import s3_bucket, s3_server  # noqa: F401 (fixtures)

QUESTIONS = 2


def _settings(folder: Path, store: str | None) -> Settings:
    overrides: dict[str, Any] = {"run.results_dir": str(folder / "results"), "run.id": "travel"}
    overrides |= {"models.qa": "fake:quote-memory", "models.judge": "fake:match-judge"}
    if store is not None:
        overrides["memory.build_store"] = store
    return load_settings(None, **overrides)


def _refs(settings: Settings) -> list[Any]:
    return steps.prepare_questions(steps.plan_run(settings), limit=QUESTIONS)[1]


def _ingest(settings: Settings) -> list[steps.IngestOutcome]:
    return [asyncio.run(steps.ingest_question(r, settings, "travel")) for r in _refs(settings)]


def _answers(settings: Settings, outcomes: list[steps.IngestOutcome]) -> list[Any]:
    """Each question's retrieval rows and answer, timing left out."""
    found = []
    for ref, outcome in zip(_refs(settings), outcomes, strict=True):
        rows = asyncio.run(steps.evaluate_question(ref, outcome, settings))
        answer = asyncio.run(steps.answer_outcome(ref, outcome, qa_panel(settings)))
        kept = [{k: v for k, v in asdict(r).items() if "seconds" not in k} for r in rows]
        found.append((kept, answer.hypothesis, answer.status))
    return found


def _travel(tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    single = _settings(tmp_path / "single", None)
    monkeypatch.chdir(tmp_path)
    expected = _answers(single, _ingest(single))
    worker_a, worker_b = tmp_path / "worker-a", tmp_path / "worker-b"
    worker_a.mkdir(), worker_b.mkdir()
    monkeypatch.chdir(worker_a)
    outcomes = _ingest(_settings(worker_a, store))
    assert all(len(o.build_sha256) == 64 and o.build_object for o in outcomes)
    monkeypatch.chdir(worker_b)
    on_b = _settings(worker_b, store)
    assert not (worker_b / "results" / "memory.sqlite").exists()
    assert _answers(on_b, outcomes) == expected
    assert any(row[0] and row[1] for row in expected)  # the memories were searched and answered

    # A damaged object is refused, naming the build and its URL.
    damaged = outcomes[0]
    RunStore(store).put_bytes(damaged.build_object, b"not the build")
    worker_c = tmp_path / "worker-c"
    worker_c.mkdir()
    monkeypatch.chdir(worker_c)
    on_c = _settings(worker_c, store)
    with pytest.raises(MemoryBuildError) as refused:
        asyncio.run(steps.evaluate_question(_refs(on_c)[0], damaged, on_c))
    assert damaged.memory_id in str(refused.value)
    assert RunStore(store).url(damaged.build_object) in str(refused.value)


def test_a_build_travels_through_a_local_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _travel(tmp_path, str(tmp_path / "builds"), monkeypatch)


def test_a_build_travels_through_s3(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    s3_bucket: str,  # noqa: F811
) -> None:
    _travel(tmp_path, f"s3://{s3_bucket}/builds", monkeypatch)


def test_no_build_store_records_no_build(tmp_path: Path) -> None:
    outcome = _ingest(_settings(tmp_path, None))[0]
    assert (outcome.build_object, outcome.build_sha256) == ("", "")


def test_a_build_store_changes_no_cache_key(tmp_path: Path) -> None:
    """Where builds travel changes no result: every stage's key is the one it has without."""
    from lme_bench.run.cache_keys import stage_key

    off, on = _settings(tmp_path, None), _settings(tmp_path, str(tmp_path / "builds"))
    ref = _refs(off)[0]
    keys = {
        stage: {stage_key(stage, ref, s, "travel") for s in (off, on)}
        for stage in ("ingest", "retrieval", "answer", "judge")
    }
    assert all(len(found) == 1 and None not in found for found in keys.values()), keys


def _ingest_batch(settings: Settings) -> list[Any]:
    """The questions ingested as a raw ingestion batch runs them (lme_bench.run.batch)."""
    from lme_bench.run.batch import Batch

    refs = _refs(settings)
    located = asyncio.run(steps.locate_memories([r.build for r in refs], settings, "travel"))
    return Batch("ingest", refs, [located[r.build] for r in refs], settings, "travel").run()


def test_a_batch_puts_every_build_before_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The puts run beside the next question's ingestion; each object is whole in the store,
    with the sha256 its outcome records, once the batch returns, and no export is left."""
    import hashlib
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "builds"
    outcomes = _ingest_batch(_settings(tmp_path, str(store)))
    assert [o.error for o in outcomes] == [None] * QUESTIONS
    for outcome in (o.value for o in outcomes):
        data = (store / outcome.build_object).read_bytes()
        assert hashlib.sha256(data).hexdigest() == outcome.build_sha256
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_question_whose_put_failed_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.results.store import StoreUnavailable

    monkeypatch.chdir(tmp_path)
    settings = _settings(tmp_path, str(tmp_path / "builds"))
    refused: list[str] = []  # the first object put, whichever question's it is
    put = RunStore.put_file

    def put_file(self: RunStore, name: str, source: Path) -> None:
        if not refused or refused == [name]:
            refused[:] = [name]
            raise StoreUnavailable(f"{self.url(name)}: the store did not answer")
        put(self, name, source)

    monkeypatch.setattr(RunStore, "put_file", put_file)
    outcomes = _ingest_batch(settings)
    failed = [o for o in outcomes if o.error is not None]
    saved = [o.value for o in outcomes if o.error is None]
    assert len(failed) == 1 and failed[0].value is None
    assert f"{refused[0]}: the store did not answer" in str(failed[0].error)
    assert len(saved) == 1 and saved[0].build_object != refused[0]
    assert (tmp_path / "builds" / saved[0].build_object).is_file()


def test_builds_travel_beside_results_at_a_url_when_ingestion_calls_a_model() -> None:
    """A raw ingestion is remade where a worker lacks it (as fast as a fetch and merge,
    perf/build_travel_speed.py); an agentic one travels; a named build store always."""
    from lme_bench.run.builds import build_store

    url = {"run.results_dir": "memory://bucket/runs"}
    raw = load_settings(None, **url)
    agentic = load_settings(None, **url, **{"ingest.mode": "agentic", "models.agent": "fake:x"})
    named = load_settings(None, **url, **{"memory.build_store": "memory://bucket/builds"})
    assert build_store(raw) is None
    assert [build_store(s).url() for s in (agentic, named)] == [  # type: ignore[union-attr]
        "memory://bucket/runs/memory-builds",
        "memory://bucket/builds",
    ]
