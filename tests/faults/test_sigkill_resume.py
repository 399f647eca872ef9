"""`lme-bench run` killed with SIGKILL at five seeded-random points of its progress (sessions
checkpointed plus stage results stored), run again with the same command after each kill, ends
with the tables and memories of a run that was never interrupted."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.faults.runs import (
    RunEnv,
    assert_same_tables,
    finish,
    finish_ok,
    kill_group,
    memories,
    sessions_done,
    start_run,
    wait_for_progress,
)

RUN_ID = "killed"
QUESTIONS = 30
SESSIONS = 316  # of the first 30 sample questions
STAGE_RESULTS = 4 * QUESTIONS  # ingest, retrieval, answer and judge of each question
KILLS = 5
SEED = 20240605

CONFIG = """\
[ingest]
mode = "context-only"

[models]
agent = "fake:note-taker"
qa = "fake:quote-memory"
judge = "fake:match-judge"
"""


def progress(results: Path) -> int:
    """Sessions checkpointed as done, plus per-question stage results stored in the cache."""
    stored = results / ".cache" / "tasks"
    results_stored = sum(1 for _ in stored.iterdir()) if stored.is_dir() else 0
    return sessions_done(results / "checkpoints.sqlite") + results_stored


def kill_points() -> list[int]:
    """Five distinct points, none so late that the run could end before it is reached."""
    last = int(0.85 * (SESSIONS + STAGE_RESULTS))
    return sorted(random.Random(SEED).sample(range(10, last), KILLS))


def kill_at(victim: subprocess.Popen[str], results: Path, point: int) -> int:
    reached = wait_for_progress(victim, lambda: progress(results), point, "progress")
    kill_group(victim)
    ended = finish(victim)
    assert ended.code == -9, ended.tail()
    return reached


@pytest.mark.slow
def test_five_kills_then_a_rerun_end_as_an_uninterrupted_run(
    tmp_path: Path, run_env: RunEnv
) -> None:
    config = tmp_path / "context-only.toml"
    config.write_text(CONFIG)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    limit = ("--limit", str(QUESTIONS))
    reference = start_run(config, clean, RUN_ID, run_env(), *limit)

    reached = []
    for point in kill_points():
        reached.append(kill_at(start_run(config, killed, RUN_ID, run_env(), *limit), killed, point))
    assert reached == sorted(reached) and reached[-1] < SESSIONS + STAGE_RESULTS
    assert not (killed / RUN_ID / "ingest.parquet").exists()  # no results written yet

    finish_ok(start_run(config, killed, RUN_ID, run_env(), *limit))  # the same command again
    finish_ok(reference)

    assert_same_tables(killed / RUN_ID, clean / RUN_ID)
    ingest = pq.read_table(killed / RUN_ID / "ingest.parquet").to_pylist()
    assert len(ingest) == SESSIONS and all(row["status"] == "ok" for row in ingest)
    assert any(row["resumed"] for row in ingest), "sessions were taken from checkpoints"
    memories_after, duplicates = memories(killed / "memory.sqlite")
    reference_memories, reference_duplicates = memories(clean / "memory.sqlite")
    assert duplicates == [] and reference_duplicates == []
    assert len(memories_after) == QUESTIONS
    assert memories_after == reference_memories  # same entries and contexts, none put twice
    assert all(m["contexts"] for m in memories_after.values())
