"""`lme-bench run` as a child process, and reading back what a run left: Parquet tables by
key, the embedded memory store's entries and contexts, ingestion progress."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
RunEnv = Callable[..., dict[str, str]]  # extra variables -> a child run's environment
RUN_TIMEOUT_S = 300.0

# What may differ between two runs of the same work: the run's name, timings, and whether a
# session's row was taken from a checkpoint.
VOLATILE = frozenset({"run_id", "seconds", "search_seconds", "resumed"})
KEYS = {
    "ingest": ("question_id", "session_index"),
    "retrieval": ("question_id", "granularity"),
    "hypotheses": ("question_id",),
    "scores": ("question_id", "judge", "repeat"),
}


def cli_env(prefect_home: Path, **extra: str) -> dict[str, str]:
    """The environment of a child run: none of this process's LME_/PREFECT_ settings, its own
    Prefect home, and `extra` (e.g. PREFECT_API_URL, LME_MEMORY__PARAMS__PATH)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LME_", "PREFECT_"))}
    return env | {
        "PYTHONPATH": str(ROOT),
        "PREFECT_HOME": str(prefect_home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        # a busy machine can need more than the default 20 s to start the temporary server
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
        **extra,
    }


def start_cli(
    args: list[str],
    env: dict[str, str],
    *,
    merge_stderr: bool = True,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[str]:
    """`lme-bench ARGS…` in its own process group (with a temporary Prefect server, if it
    starts one)."""
    return subprocess.Popen(
        [sys.executable, "-m", "lme_bench_flows.command", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=preexec_fn,
    )


def start_run(
    config: Path,
    results: Path,
    run_id: str,
    env: dict[str, str],
    *options: str,
    merge_stderr: bool = True,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[str]:
    """`lme-bench run CONFIG --results-dir RESULTS --run-id RUN_ID OPTIONS…`."""
    args = ["run", str(config), "--results-dir", str(results), "--run-id", run_id, *options]
    return start_cli(args, env, merge_stderr=merge_stderr, preexec_fn=preexec_fn)


@dataclass(frozen=True)
class Ended:
    code: int
    out: str
    err: str  # empty when stderr went to `out`

    def tail(self, chars: int = 4000) -> str:
        return (self.out + self.err)[-chars:]


def finish(process: subprocess.Popen[str], timeout: float = RUN_TIMEOUT_S) -> Ended:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        out, err = process.communicate()
        pytest.fail(f"lme-bench run did not finish in {timeout} s:\n{(out + (err or ''))[-4000:]}")
    return Ended(process.returncode, out, err or "")


def finish_ok(process: subprocess.Popen[str], timeout: float = RUN_TIMEOUT_S) -> Ended:
    ended = finish(process, timeout)
    assert ended.code == 0, ended.tail()
    return ended


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL the run and everything in its process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


PROGRESS_DEADLINE_S = 180.0


def wait_for_progress(
    process: subprocess.Popen[str], measure: Callable[[], int], point: int, what: str
) -> int:
    """Poll `measure` until it reaches `point` (returns what it read); the test fails if the
    run ends first or makes no such progress within PROGRESS_DEADLINE_S (the run is killed)."""
    deadline = time.monotonic() + PROGRESS_DEADLINE_S
    while (reached := measure()) < point:
        if process.poll() is not None:
            pytest.fail(f"the run ended before {what} reached {point}:\n{finish(process).tail()}")
        if time.monotonic() > deadline:
            kill_group(process)
            pytest.fail(f"{what} at {reached} < {point} after {PROGRESS_DEADLINE_S} s")
        time.sleep(0.05)
    return reached


def _count(path: Path, query: str) -> int:
    if not path.exists():
        return 0
    db = sqlite3.connect(path, timeout=5)
    try:
        (count,) = db.execute(query).fetchone()
        return int(count)
    except sqlite3.OperationalError:  # the table does not exist yet
        return 0
    finally:
        db.close()


def sessions_done(checkpoints: Path) -> int:
    """Sessions the agent has finished and stored (0 until the checkpoint table exists)."""
    return _count(checkpoints, "SELECT count(*) FROM sessions WHERE state = 'done'")


def entries_stored(store: Path) -> int:
    return _count(store, "SELECT count(*) FROM entries")


def table_rows(run_dir: Path, name: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    rows = pq.read_table(run_dir / f"{name}.parquet").to_pylist()
    return {tuple(row[k] for k in KEYS[name]): row for row in rows}


def comparable(row: dict[str, Any], drop: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in VOLATILE | drop}


def assert_same_tables(run_dir: Path, reference: Path, drop: frozenset[str] = frozenset()) -> None:
    """Every table of `run_dir` holds the rows of `reference`'s, volatile columns and `drop`
    aside."""
    for name in KEYS:
        found, expected = table_rows(run_dir, name), table_rows(reference, name)
        assert found.keys() == expected.keys(), name
        for key, row in found.items():
            assert comparable(row, drop) == comparable(expected[key], drop), (name, key)


def question_titles(results: Path) -> dict[str, str]:
    """Memory title -> question id, from the manifests of the runs in a results folder."""
    found: dict[str, str] = {}
    for manifest in results.glob("*/manifest.json"):
        found |= json.loads(manifest.read_text()).get("memory_titles", {})
    return found


def memories(store: Path, results: Path | None = None) -> tuple[dict[str, Any], list[Any]]:
    """Per question id (the title where no manifest in `results`, by default the store's
    folder, names it): the memory's entries (raw text, summary, tags) in order and its
    context snapshots; and every (memory, raw text, tags) stored more than once."""
    names = question_titles(results or store.parent)
    db = sqlite3.connect(store)
    try:
        titles = {
            memory_id: names.get(title, title)
            for memory_id, title in db.execute("SELECT memory_id, title FROM memories")
        }
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
