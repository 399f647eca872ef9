"""Two processes asked for one memory build at once ingest it once: the second waits for the
first's lock file, then finds the build done and reuses it (same memory, same ingestion id)."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
from pathlib import Path
from typing import Any

from lme_bench.backends.capabilities import entries_of
from lme_bench.backends.configured import open_system
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.run.steps import ingest_question, plan_run, prepare_questions
from tests.benchmarks.locomo.samples import listed_sample, write_json

BOTH_STARTING_SECONDS = 3.0
"""How long an ingestion about to write waits for the other process to be about to write too.
With the lock the other never gets there while this one holds it, so this one goes on alone
after the wait; without it both would write. Only the chance of catching a missing lock hangs
on it, never the outcome with the lock."""


def _ingest_in_child(
    ref: QuestionRef, settings: Settings, run_id: str, go: Any, both_writing: Any, out: Any
) -> None:
    begin = Checkpoints.begin_ingestion

    def begin_together(self: Checkpoints, memory_id: str) -> str:
        with contextlib.suppress(threading.BrokenBarrierError):
            both_writing.wait(BOTH_STARTING_SECONDS)
        return begin(self, memory_id)

    Checkpoints.begin_ingestion = begin_together  # type: ignore[method-assign]
    go.wait()
    outcome = asyncio.run(ingest_question(ref, settings, run_id))
    written = sum(not record.resumed for record in outcome.sessions)
    out.put((outcome.memory_id, outcome.ingestion_id, written, len(outcome.sessions)))


async def _entries(settings: Settings, memory_id: str) -> int:
    system = open_system(settings)
    try:
        entries = entries_of(system)
        assert entries is not None
        return await entries.count_entries(memory_id)
    finally:
        await system.close()


def test_two_processes_ingest_one_build_once(tmp_path: Path) -> None:
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7")])
    settings = load_settings(
        None,
        **{
            "run.results_dir": str(tmp_path / "results"),
            "run.id": "shared-build",
            "dataset.path": str(data),
            "models.judge": "none",
            "run.stages": ["ingest"],
        },
    )
    plan = plan_run(settings)
    _, refs = prepare_questions(plan)
    assert len({ref.build for ref in refs}) == 1 and len(refs) > 1
    context = multiprocessing.get_context("spawn")
    go, both_writing, out = context.Event(), context.Barrier(2), context.Queue()
    children = [
        context.Process(
            target=_ingest_in_child, args=(ref, settings, plan.run_id, go, both_writing, out)
        )
        for ref in refs[:2]  # two questions of the one build, one per process
    ]
    for child in children:
        child.start()
    go.set()
    results = [out.get(timeout=300) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0

    (memory_a, ingestion_a, written_a, sessions_a), (memory_b, ingestion_b, written_b, _) = results
    assert memory_a == memory_b and ingestion_a == ingestion_b
    assert sorted([written_a, written_b]) == [0, sessions_a] and sessions_a == 2
    turns = sum(len(s) for k, s in listed_sample()["conversation"].items() if k[-1].isdigit())
    assert asyncio.run(_entries(settings, memory_a)) == turns == 4
