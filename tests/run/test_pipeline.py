"""The benchmark's steps without Prefect, on the bundled sample."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.backends.builtin_params import memory_path
from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.config.settings import load_settings
from lme_bench.metrics.ranking_metrics import METRIC_NAMES
from lme_bench.results.tables import SCHEMA_VERSION
from lme_bench.run.finish import RunResults, write_run
from lme_bench.run.steps import (
    error_rows,
    evaluate_question,
    ingest_question,
    plan_run,
    prepare_questions,
)


def test_steps_write_complete_results_and_reingestion_adds_nothing(tmp_path: Path) -> None:
    settings = load_settings(None, **{"run.results_dir": str(tmp_path), "run.id": "steps"})
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan)
    assert len(refs) >= 30
    outcomes = [asyncio.run(ingest_question(ref, settings, plan.run_id)) for ref in refs]
    assert all(o.entries == ref.n_turns for o, ref in zip(outcomes, refs, strict=True))

    again = asyncio.run(ingest_question(refs[0], settings, plan.run_id))
    assert (again.memory_id, again.entries) == (outcomes[0].memory_id, outcomes[0].entries)

    rows = []
    for ref, outcome in zip(refs[1:], outcomes[1:], strict=True):
        rows += asyncio.run(evaluate_question(ref, outcome, settings))
    rows += error_rows(refs[0], RuntimeError("memory server went away"))
    report = write_run(
        plan, settings, prepared, refs, RunResults(outcomes, rows), datetime.now(UTC)
    )

    table = pq.read_table(plan.run_dir / "retrieval.parquet")
    assert table.num_rows == 2 * len(refs)
    assert table.schema.metadata[b"lme_bench.schema_version"] == SCHEMA_VERSION.encode()
    assert set(METRIC_NAMES) <= set(table.column_names)
    data = table.to_pylist()
    failed = [r for r in data if r["status"] == "error"]
    assert {r["question_id"] for r in failed} == {refs[0].question_id}
    assert all(r["recall_any@5"] is None and "went away" in r["error"] for r in failed)
    ok = [r for r in data if r["status"] == "ok" and not r["is_abstention"]]
    assert ok and all(0.0 <= r["recall_any@50"] <= 1.0 for r in ok)
    # BM25 on the question text finds evidence for most sample questions within 50 turns.
    assert sum(r["recall_any@50"] for r in ok) / len(ok) > 0.5
    assert report.failed == [refs[0].question_id]

    manifest = json.loads((plan.run_dir / "manifest.json").read_text())
    assert manifest["dataset"]["sha256"] == prepared.sha256
    assert manifest["dataset"]["release"].startswith("lme-bench bundled sample")
    assert manifest["config"]["memory"]["backend"] == "embedded"
    assert set(manifest["git"]) == {"sha", "dirty"} and manifest["packages"]["prefect"]
    assert manifest["started_at"] <= manifest["finished_at"]
    summary = (plan.run_dir / "summary.md").read_text()
    assert "| overall |" in summary and "non-abstention" in summary
    assert not list(plan.run_dir.glob(".*.tmp"))


def test_search_of_a_memory_built_by_ingestion(tmp_path: Path) -> None:
    settings = load_settings(None, **{"run.results_dir": str(tmp_path), "run.id": "s"})
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=1)
    outcome = asyncio.run(ingest_question(refs[0], settings, plan.run_id))
    backend = EmbeddedEntryStore(memory_path(settings))
    found = asyncio.run(backend.search(outcome.memory_id, refs[0].load().question, top_ke=5))
    assert 0 < len(found.entries) <= 5
    assert all(hit.tags["session_key"].startswith("s") for hit in found.entries)


def test_new_ingestion_settings_under_the_same_run_id_are_refused(tmp_path: Path) -> None:
    from lme_bench.ingest.question import IngestSettingsChanged
    from lme_bench.run.transient import is_transient

    common = {"run.results_dir": str(tmp_path), "run.id": "same"}
    raw = load_settings(None, **common)
    _, refs = prepare_questions(plan_run(raw), None, 1)
    asyncio.run(ingest_question(refs[0], raw, "same"))
    agentic = load_settings(
        None, **common, **{"ingest.mode": "agentic", "models.agent": "fake:note-taker"}
    )
    with pytest.raises(IngestSettingsChanged, match="new run id") as refused:
        asyncio.run(ingest_question(refs[0], agentic, "same"))
    assert not is_transient(refused.value)
    asyncio.run(ingest_question(refs[0], agentic, "other"))  # a new run id: a new memory


def test_memories_filled_with_other_settings_stop_the_run_before_any_work(tmp_path: Path) -> None:
    """Locating the memories finds the changed claim: one error for the run, naming how many
    questions it concerns, instead of every question failing in its ingestion."""
    from lme_bench.ingest.question import IngestSettingsChanged, locate_memories

    common = {"run.results_dir": str(tmp_path), "run.id": "same"}
    raw = load_settings(None, **common)
    ids = [ref.question_id for ref in prepare_questions(plan_run(raw), None, 2)[1]]
    _, refs = prepare_questions(plan_run(raw), None, 1)
    asyncio.run(ingest_question(refs[0], raw, "same"))  # the first question only
    agentic = load_settings(
        None, **common, **{"ingest.mode": "agentic", "models.agent": "fake:note-taker"}
    )
    with pytest.raises(IngestSettingsChanged, match="1 of 2 questions") as refused:
        asyncio.run(locate_memories(ids, agentic, "same"))
    assert ids[0] in str(refused.value)
    retrieval_only = load_settings(None, **common, **{"run.stages": ["retrieval"]})
    located = asyncio.run(locate_memories(ids, retrieval_only, "same"))
    assert located[ids[0]].entries > 0 and located[ids[1]].entries == 0
    assert asyncio.run(locate_memories(ids, raw, "same")).keys() == set(ids)  # same settings


def test_ingestions_prepare_a_few_at_a_time_and_a_failed_one_gives_its_turn_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingestions started together (each on its own thread, as the flow runs them) prepare at
    most PREPARING_AT_ONCE at a time; one that fails while preparing frees its turn."""
    import threading
    import time

    from lme_bench.ingest import question

    settings = load_settings(None, **{"run.results_dir": str(tmp_path), "run.id": "turns"})
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=6)
    preparing, peak, lock = [0], [0], threading.Lock()
    real_view = question.make_view

    def slow_view(instance: Any) -> Any:  # preparing: from loading the question on
        with lock:
            preparing[0] += 1
            peak[0] = max(peak[0], preparing[0])
        time.sleep(0.05)
        if instance.question_id == refs[0].question_id:
            with lock:
                preparing[0] -= 1
            raise RuntimeError("unreadable question")
        return real_view(instance)

    real_writer = question._session_writer

    def writer(*args: Any, **kwargs: Any) -> Any:  # the sessions start: preparing is over
        with lock:
            preparing[0] -= 1
        return real_writer(*args, **kwargs)

    monkeypatch.setattr(question, "make_view", slow_view)
    monkeypatch.setattr(question, "_session_writer", writer)
    for _ in range(question.PREPARING_AT_ONCE):  # fails while holding every turn in turn
        with pytest.raises(RuntimeError, match="unreadable"):
            asyncio.run(asyncio.wait_for(ingest_question(refs[0], settings, "turns"), 10))
    outcomes: list[Any] = []
    threads = [
        threading.Thread(
            target=lambda ref=ref: outcomes.append(
                asyncio.run(asyncio.wait_for(ingest_question(ref, settings, "turns"), 30))
            )
        )
        for ref in refs[1:]
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(o.question_id for o in outcomes) == sorted(r.question_id for r in refs[1:])
    assert all(o.entries > 0 for o in outcomes)
    assert 1 <= peak[0] <= question.PREPARING_AT_ONCE
