"""Crash recovery: `lme-bench run` killed with SIGKILL mid-ingestion, then run again with the
same command, ends with the results and memories of a run that was never interrupted."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view
from lme_bench.entries.capability import VaultEntries
from lme_bench.ingest.agent import AgentWriter
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.loop import feed_sessions
from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import note_taker
from lme_bench.providers.retry import RetryPolicy
from tests.factories import make_question
from tests.faults.runs import (
    assert_same_tables,
    cli_env,
    comparable,
    finish_ok,
    memories,
    sessions_done,
    start_run,
)

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


@pytest.mark.slow
def test_killed_run_resumes_to_the_results_of_an_uninterrupted_run(tmp_path: Path) -> None:
    config = tmp_path / "agentic.toml"
    config.write_text(CONFIG)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    limit = ("--limit", str(LIMIT))

    # The reference run ends before the killed one starts: Prefect picks a temporary server's
    # port at random and checks it only by its health answer, so two temporary servers starting
    # at once can end up sharing one, and killing one run's server would break the other run.
    clean_env = cli_env(
        tmp_path / "prefect-clean", LME_MEMORY__PARAMS__PATH=str(clean / "memory.sqlite")
    )
    finish_ok(start_run(config, clean, RUN_ID, clean_env, *limit))

    store = killed / "memory.sqlite"
    env = cli_env(tmp_path / "prefect-killed", LME_MEMORY__PARAMS__PATH=str(store))
    victim = start_run(config, killed, RUN_ID, env, *limit)
    checkpoints = killed / "checkpoints.sqlite"
    deadline = time.monotonic() + 180
    while sessions_done(checkpoints) < KILL_AFTER_SESSIONS:
        if victim.poll() is not None:
            pytest.fail(f"the run ended before it was killed:\n{victim.communicate()[0][-4000:]}")
        if time.monotonic() > deadline:
            os.killpg(victim.pid, signal.SIGKILL)
            pytest.fail(f"fewer than {KILL_AFTER_SESSIONS} sessions ingested within 180 s")
        time.sleep(0.2)
    os.killpg(victim.pid, signal.SIGKILL)  # the CLI and its temporary Prefect server
    victim.communicate()
    assert victim.returncode == -signal.SIGKILL
    assert KILL_AFTER_SESSIONS <= sessions_done(checkpoints) < SESSIONS
    assert not (killed / RUN_ID / "ingest.parquet").exists()  # no results written yet

    finish_ok(start_run(config, killed, RUN_ID, env, *limit))  # the same command again

    ingest = pq.read_table(killed / RUN_ID / "ingest.parquet").to_pylist()
    assert len(ingest) == SESSIONS and all(row["status"] == "ok" for row in ingest)
    resumed = {(row["question_id"], row["session_index"]) for row in ingest if row["resumed"]}
    assert resumed, "the rerun took the killed run's finished sessions from their checkpoints"
    assert_same_tables(killed / RUN_ID, clean / RUN_ID)

    found, duplicates = memories(store)
    reference_memories, reference_duplicates = memories(clean / "memory.sqlite")
    assert duplicates == [] and reference_duplicates == []
    counts = {title: len(m["entries"]) for title, m in found.items()}
    assert counts == {title: len(m["entries"]) for title, m in reference_memories.items()}
    assert len(counts) == LIMIT and all(counts.values())
    for title, memory in found.items():
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
    backend = EmbeddedEntryStore(folder / "memory.sqlite")
    checkpoints = checkpoints or Checkpoints(folder / "checkpoints.sqlite")
    model = ScriptedChatModel(script=[note_taker])
    settings = IngestSettings(mode="agentic", context_every=3)
    view, _ = make_view(_question())

    async def run() -> tuple[str, list[SessionRecord]]:
        entries_in_vault = VaultEntries(backend, "v")
        memory = await entries_in_vault.open_memory("q__r")
        writer = AgentWriter(entries_in_vault, model, settings, checkpoints, FAST)
        return memory, await feed_sessions("q", view, memory, checkpoints, writer)

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
    assert [comparable(r.to_json()) for r in again] == [
        comparable(r.to_json()) for r in records
    ]  # the replayed session reports the calls its writes took
    assert contexts_again == contexts  # its context snapshot is not put twice
