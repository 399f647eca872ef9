"""Against a memory server that does not de-duplicate (every add_entry stored), an ingestion
cut off mid-session by the server crashing, then retried on the restarted server, stores each
turn exactly once: the retry skips finished sessions and sends only the turns the memory
lacks. Raw, and agentic with the fake note-taker."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.mcp_session import MemoryConnectionError
from lme_bench.config.settings import Settings, load_settings
from lme_bench.run.steps import ingest_question, plan_run, prepare_questions
from tests.wire.capture import http_sent, tool_calls
from tests.wire.servers import RecordingHttpServer

QUESTION = "898f2907"
NO_DEDUP = ("--no-dedup", "--no-queue")  # every entry stored, before add_entry answers


def _settings(results: Path, mode: str, **memory: Any) -> Settings:
    overrides: dict[str, Any] = {"run.results_dir": str(results), "run.id": "retry"}
    overrides |= {"ingest.mode": mode, **{f"memory.{k}": v for k, v in memory.items()}}
    if mode == "agentic":
        overrides["models.agent"] = "fake:note-taker"
    return load_settings(None, **overrides)


def _ingest(settings: Settings) -> Any:
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, [QUESTION])
    return asyncio.run(ingest_question(refs[0], settings, plan.run_id))


def _stored(store: Path) -> tuple[list[tuple[str, str]], int]:
    """Every entry's (session key, turn index) in order, and the number of context snapshots."""
    db = sqlite3.connect(store)
    try:
        tags = [json.loads(t) for (t,) in db.execute("SELECT tags FROM entries ORDER BY seq")]
        (contexts,) = db.execute("SELECT count(*) FROM contexts").fetchone()
    finally:
        db.close()
    return [(t["session_key"], t["turn_index"]) for t in tags], int(contexts)


@pytest.mark.parametrize("mode", ["raw", "agentic"])
def test_retry_after_a_crash_mid_session_stores_each_turn_once(tmp_path: Path, mode: str) -> None:
    _ingest(_settings(tmp_path / "clean", mode))  # the reference: embedded, never interrupted
    expected, expected_contexts = _stored(tmp_path / "clean" / "memory.sqlite")
    per_session = Counter(session for session, _ in expected)
    first, second = sorted(per_session)[:2]
    assert per_session[second] >= 2
    crash_after = per_session[first] + per_session[second] // 2  # halfway through session 2

    server = RecordingHttpServer(tmp_path / "server")
    settings = _settings(
        tmp_path / "results", mode, backend="mcp", params=server.settings().model_dump()
    )
    server.start(tmp_path / "first.log", *NO_DEDUP, "--crash-after-adds", str(crash_after))
    try:
        with pytest.raises(MemoryConnectionError):
            _ingest(settings)
        assert server.wait() == -signal.SIGKILL
        held, _ = _stored(server.path)
        assert held == expected[:crash_after]  # session 2 half stored

        server.start(tmp_path / "retry.log", *NO_DEDUP)
        outcome = _ingest(settings)
    finally:
        server.stop()

    stored, contexts = _stored(server.path)
    assert [key for key, n in Counter(stored).items() if n > 1] == []
    assert sorted(stored) == sorted(expected) and contexts == expected_contexts
    assert outcome.entries == len(expected)
    _, messages = http_sent(tmp_path / "retry.log")
    resent = [args for name, args in tool_calls(messages) if name == "add_entry"]
    assert len(resent) == len(expected) - crash_after  # only what the memory lacked
    records = {r.session_key: r for r in outcome.sessions}
    assert records[first].resumed and records[second].resumed
