"""A run stopped by SIGTERM mid-ingestion leaves summary.md and summary.json saying it stopped
and what it spent and stored, counted from its checkpoints; the same command then resumes it
to the end. Its memory agent is a model on a loopback OpenAI-compatible server that answers
slowly, so the signal finds the run with sessions stored and others still to go."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.faults.runs import (
    cli_env,
    finish,
    finish_ok,
    sessions_done,
    start_run,
    wait_for_progress,
)
from tests.flows.priced_local_agent import CONFIG, CONTEXT
from tests.providers.behaviour import Behaviour
from tests.providers.fake_openai_server import serve

pytestmark = pytest.mark.slow

STORED_BEFORE_STOP = 3
LINE = re.compile(
    r"Stopped by SIGTERM: (\d+) sessions stored, (\d+) model calls, ([\d,]+) tokens, \$([\d.]+);"
    r" the same command resumes run stopped"
)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the stop reads child processes from /proc")
def test_a_stopped_run_summarizes_what_it_spent_and_stored_then_resumes(tmp_path: Path) -> None:
    results = tmp_path / "results"
    env = cli_env(tmp_path / "prefect", LME_MEMORY__PARAMS__PATH=str(results / "memory.sqlite"))
    with serve([CONTEXT], Behaviour(latency_s=0.3)) as (url, fake):
        config = tmp_path / "local.toml"
        config.write_text(CONFIG.format(base_url=url))
        run = start_run(config, results, "stopped", env, "--limit", "1")
        checkpoints = results / "checkpoints.sqlite"
        wait_for_progress(run, lambda: sessions_done(checkpoints), STORED_BEFORE_STOP, "sessions")
        os.kill(run.pid, signal.SIGTERM)
        ended = finish(run, timeout=120)
        assert ended.code == 128 + signal.SIGTERM, ended.tail()
        stored = sessions_done(checkpoints)

        markdown = (results / "stopped" / "summary.md").read_text()
        found = LINE.search(markdown)
        assert found, markdown
        sessions, calls, tokens, cost = found.groups()
        # threads still in flight may store a session after the summary read the checkpoints
        assert STORED_BEFORE_STOP <= int(sessions) <= stored
        assert int(calls) >= int(sessions)  # a context-only session is one call here
        assert int(calls) <= len(fake.requests)  # no more than the server was asked
        assert int(tokens.replace(",", "")) > 0 and float(cost) > 0
        assert found.group(0) in ended.out  # the stop prints the same line
        summary = json.loads((results / "stopped" / "summary.json").read_text())
        assert summary["stopped"]["signal"] == "SIGTERM"
        assert summary["ingestion"]["stored_sessions"] == int(sessions)
        assert summary["ingestion"]["llm_calls"] == int(calls)
        assert not list((results / "stopped").glob("*.tmp*")), "a half-written file was left"

        fake.behaviour = Behaviour()  # the resumed run at full speed
        finish_ok(start_run(config, results, "stopped", env, "--limit", "1"))
    markdown = (results / "stopped" / "summary.md").read_text()
    assert "Stopped by" not in markdown
    ingest = pq.read_table(results / "stopped" / "ingest.parquet").to_pylist()
    assert ingest and all(row["status"] == "ok" for row in ingest)
    assert sum(row["resumed"] for row in ingest) >= stored  # the stored sessions kept
