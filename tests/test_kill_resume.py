"""Crash recovery: `lme-bench run` killed with SIGKILL mid-ingestion, then run again with the
same command, ends with the results and memories of a run that was never interrupted."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.config import IngestSettings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view
from lme_bench.ingest.agent import AgentIngestor
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord
from lme_bench.memory.embedded import EmbeddedBackend
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import note_taker
from lme_bench.providers.retry import RetryPolicy
from tests.factories import make_question

ROOT = Path(__file__).resolve().parents[1]
RUN_ID = "crash"
LIMIT = 10  # the first 10 sample questions: enough sessions to kill the run midway
SESSIONS = 103  # their sessions
KILL_AFTER_SESSIONS = 15

CONFIG = """\
[memory]
backend = "embedded"

[ingest]
mode = "agentic"

[models]
agent = "fake:note-taker"
qa = "fake:quote-memory"
judge = "fake:match-judge"
"""

# What may differ between two runs of the same work: the run's name, timings, and whether a
# session's row was taken from a checkpoint.
VOLATILE = {"run_id", "seconds", "resumed"}
KEYS = {
    "ingest": ("question_id", "session_index"),
    "retrieval": ("question_id", "granularity"),
    "hypotheses": ("question_id",),
    "scores": ("question_id", "judge", "repeat"),
}


def _env(prefect_home: Path, memory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LME_", "PREFECT_"))}
    return env | {
        "PYTHONPATH": str(ROOT),
        "PREFECT_HOME": str(prefect_home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        # a busy machine can need more than the default 20 s to start the temporary server
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
        "LME_MEMORY__PATH": str(memory),
    }


def _start(config: Path, results: Path, prefect_home: Path, memory: Path) -> subprocess.Popen[str]:
    command = [
        *(sys.executable, "-m", "lme_bench.cli", "run", str(config)),
        *("--results-dir", str(results), "--run-id", RUN_ID, "--limit", str(LIMIT)),
    ]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=_env(prefect_home, memory),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, with the temporary Prefect server
    )


def _finish(process: subprocess.Popen[str], timeout: float = 240) -> str:
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"lme-bench run did not finish in {timeout} s:\n{output[-4000:]}")
    assert process.returncode == 0, output[-4000:]
    return output


def _sessions_done(checkpoints: Path) -> int:
    """Sessions the agent has finished and stored (0 until the checkpoint table exists)."""
    if not checkpoints.exists():
        return 0
    db = sqlite3.connect(checkpoints, timeout=5)
    try:
        (count,) = db.execute("SELECT count(*) FROM sessions WHERE state = 'done'").fetchone()
        return int(count)
    except sqlite3.OperationalError:  # not created yet
        return 0
    finally:
        db.close()


def _rows(run_dir: Path, name: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    rows = pq.read_table(run_dir / f"{name}.parquet").to_pylist()
    return {tuple(row[k] for k in KEYS[name]): row for row in rows}


def _comparable(row: dict[str, Any], drop: set[str]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in VOLATILE | drop}


def _memories(store: Path) -> tuple[dict[str, Any], list[Any]]:
    """Per memory title: its entries (raw text, summary, tags) in order and its context
    snapshots; and every (memory, raw text, tags) stored more than once."""
    db = sqlite3.connect(store)
    try:
        titles = dict(db.execute("SELECT memory_id, title FROM memories").fetchall())
        found: dict[str, Any] = {t: {"entries": [], "contexts": []} for t in titles.values()}
        for memory_id, raw, summary, tags in db.execute(
            "SELECT memory_id, raw_entry, summary, tags FROM entries ORDER BY seq"
        ):
            found[titles[memory_id]]["entries"].append((raw, summary, tags))
        for memory_id, content in db.execute(
            "SELECT memory_id, content FROM contexts ORDER BY seq"
        ):
            found[titles[memory_id]]["contexts"].append(content)
        duplicates = db.execute(
            "SELECT memory_id, raw_entry, tags, count(*) FROM entries"
            " GROUP BY memory_id, raw_entry, tags HAVING count(*) > 1"
        ).fetchall()
    finally:
        db.close()
    return found, duplicates


@pytest.mark.slow
def test_killed_run_resumes_to_the_results_of_an_uninterrupted_run(tmp_path: Path) -> None:
    config = tmp_path / "agentic.toml"
    config.write_text(CONFIG)
    killed, clean = tmp_path / "killed", tmp_path / "clean"

    # The reference run goes alongside the one that gets killed (own Prefect home and store).
    reference = _start(config, clean, tmp_path / "prefect-clean", clean / "memory.sqlite")

    home, store = tmp_path / "prefect-killed", killed / "memory.sqlite"
    victim = _start(config, killed, home, store)
    checkpoints = killed / "checkpoints.sqlite"
    deadline = time.monotonic() + 180
    while _sessions_done(checkpoints) < KILL_AFTER_SESSIONS:
        if victim.poll() is not None:
            pytest.fail(f"the run ended before it was killed:\n{victim.communicate()[0][-4000:]}")
        if time.monotonic() > deadline:
            os.killpg(victim.pid, signal.SIGKILL)
            pytest.fail(f"fewer than {KILL_AFTER_SESSIONS} sessions ingested within 180 s")
        time.sleep(0.2)
    os.killpg(victim.pid, signal.SIGKILL)  # the CLI and its temporary Prefect server
    victim.communicate()
    assert victim.returncode == -signal.SIGKILL
    assert KILL_AFTER_SESSIONS <= _sessions_done(checkpoints) < SESSIONS
    assert not (killed / RUN_ID / "ingest.parquet").exists()  # no results written yet

    _finish(_start(config, killed, home, store))  # the same command again
    _finish(reference)

    ingest = pq.read_table(killed / RUN_ID / "ingest.parquet").to_pylist()
    assert len(ingest) == SESSIONS and all(row["status"] == "ok" for row in ingest)
    resumed = {(row["question_id"], row["session_index"]) for row in ingest if row["resumed"]}
    assert resumed, "the rerun took the killed run's finished sessions from their checkpoints"

    for name in KEYS:
        after_crash, uninterrupted = _rows(killed / RUN_ID, name), _rows(clean / RUN_ID, name)
        assert after_crash.keys() == uninterrupted.keys(), name
        for key, row in after_crash.items():
            assert _comparable(row, set()) == _comparable(uninterrupted[key], set()), (name, key)

    memories, duplicates = _memories(store)
    reference_memories, reference_duplicates = _memories(clean / "memory.sqlite")
    assert duplicates == [] and reference_duplicates == []
    counts = {title: len(m["entries"]) for title, m in memories.items()}
    assert counts == {title: len(m["entries"]) for title, m in reference_memories.items()}
    assert len(counts) == LIMIT and all(counts.values())
    for title, memory in memories.items():
        expected = reference_memories[title]
        assert memory["entries"] == expected["entries"], title  # same entries, same order
        assert memory["contexts"] == expected["contexts"], title  # no snapshot put twice


# -- the window between a session's writes being stored and its checkpoint marked done -------

FAST = RetryPolicy(base_s=0.001, throttle_base_s=0.001, jitter=0.0)


class _Crash(RuntimeError):
    pass


def _question() -> Instance:
    question = make_question()
    for session in question["haystack_sessions"]:
        for n in range(len(session), 8):
            role = "user" if n % 2 == 0 else "assistant"
            session.append({"role": role, "content": f"message {n} about kayak trips"})
    return Instance.model_validate(question)


def _ingest(folder: Path, checkpoints: Checkpoints | None = None) -> tuple[Any, ...]:
    backend = EmbeddedBackend(folder / "memory.sqlite")
    checkpoints = checkpoints or Checkpoints(folder / "checkpoints.sqlite")
    model = ScriptedChatModel(script=[note_taker])
    ingestor = AgentIngestor(
        backend, model, IngestSettings(mode="agentic", context_every=3), checkpoints, FAST
    )
    view, _ = make_view(_question())

    async def run() -> tuple[str, list[SessionRecord]]:
        vault = await backend.get_or_create_vault("v")
        memory = await backend.get_or_create_memory(vault, "q__r")
        return memory, await ingestor.ingest("q", view, vault, memory)

    memory, records = asyncio.run(run())
    store = backend.store
    entries = [(e.raw_entry, e.summary, e.tags) for e in store.list_entries(memory)]
    contexts = [
        row[0]
        for row in store._db().execute(
            "SELECT content FROM contexts WHERE memory_id = ? ORDER BY seq", (memory,)
        )
    ]
    asyncio.run(backend.close())
    return records, entries, contexts, len(model.calls)


def test_session_stored_but_not_marked_done_is_replayed_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after the first session's writes reached the memory but before its checkpoint
    was marked done: the retry stores nothing twice and reports that session as it was."""
    records, entries, contexts, calls = _ingest(tmp_path / "clean")
    assert calls > 0 and len(contexts) >= 2

    checkpoints = Checkpoints(tmp_path / "crashed" / "checkpoints.sqlite")
    with monkeypatch.context() as patch:

        def crash(memory_id: str, record: SessionRecord) -> None:
            raise _Crash("killed between storing and marking done")

        patch.setattr(checkpoints, "mark_done", crash)
        with pytest.raises(_Crash):
            _ingest(tmp_path / "crashed", checkpoints)

    again, entries_again, contexts_again, _ = _ingest(tmp_path / "crashed", checkpoints)
    assert again[0].resumed and not again[1].resumed
    assert entries_again == entries  # the store ignores identical entries
    assert [_comparable(r.to_json(), set()) for r in again] == [
        _comparable(r.to_json(), set()) for r in records
    ]  # the replayed session reports the calls its writes took
    assert contexts_again == contexts  # its context snapshot is not put twice
