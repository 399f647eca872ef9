"""SIGTERM and Ctrl-C (SIGINT) to `lme-bench run`: the run stops, its temporary Prefect server
and every other child with it, and the same command resumes it to the end."""

from __future__ import annotations

import os
import signal
import time
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

# Calls of 50 ms: the run still has seconds to go when the signal arrives, however busy the
# machine (with instant calls it could end between the test's look and its signal).
CONFIG = """\
[providers.slow]
kind = "fake"
latency_s = 0.05

[ingest]
mode = "agentic"

[models]
agent = "slow:note-taker"
"""
LIMIT, SESSIONS = 10, 103  # the first ten sample questions and their sessions


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _ctrl_c_as_at_a_terminal() -> None:
    """In the child before it starts: SIGINT as an interactive shell leaves it (a test runner
    started as a background job ignores SIGINT, and its children would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads child processes from /proc")
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_leaves_no_process_and_resumes(tmp_path: Path, sent: signal.Signals) -> None:
    config = tmp_path / "agentic.toml"
    config.write_text(CONFIG)
    results = tmp_path / "results"
    env = cli_env(tmp_path / "prefect", LME_MEMORY__PARAMS__PATH=str(results / "memory.sqlite"))
    limit = ("--limit", str(LIMIT))
    run = start_run(config, results, "stopped", env, *limit, preexec_fn=_ctrl_c_as_at_a_terminal)
    wait_for_progress(run, lambda: sessions_done(results / "checkpoints.sqlite"), 3, "sessions")
    children = _children(run.pid)
    assert children, "the run has its temporary Prefect server as a child"
    os.kill(run.pid, sent)
    ended = finish(run, timeout=120)
    assert ended.code == 128 + sent, ended.tail()
    assert f"stopped by {sent.name}; the same command resumes run stopped" in ended.out
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in children if _alive(pid)], "a child outlived the run"
    assert sessions_done(results / "checkpoints.sqlite") < SESSIONS

    finish_ok(start_run(config, results, "stopped", env, *limit))  # the same command again
    ingest = pq.read_table(results / "stopped" / "ingest.parquet").to_pylist()
    assert len(ingest) == SESSIONS and all(row["status"] == "ok" for row in ingest)
    assert any(row["resumed"] for row in ingest)
