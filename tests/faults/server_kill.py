"""A 30-question run whose MCP memory server is killed mid-ingestion (at a seeded-random number
of stored entries), then the server started again on the same SQLite file and the run redone
with `lme-bench rerun`; what each step left, for the tests to check."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.faults.memory_server import MemoryServer
from tests.faults.runs import (
    Ended,
    entries_stored,
    finish,
    start_cli,
    start_run,
    wait_for_progress,
)

RUN_ID = "server-killed"
QUESTIONS = 30
ENTRIES = 2042  # non-empty turns of the first 30 sample questions: what raw ingestion stores
SEED = 11546


def write_config(folder: Path, url: str) -> Path:
    path = folder / "mcp.toml"
    path.write_text(
        f"""[memory]
backend = "mcp"

[memory.params]
url = "{url}"
timeout_s = 20

[ingest]
mode = "raw"

[models]
qa = "fake:quote-memory"
judge = "fake:match-judge"

[limits]
ingest = {QUESTIONS}  # every question at once: their retries overlap instead of queueing
"""
    )
    return path


def read_rows(run_dir: Path, name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(run_dir / f"{name}.parquet").to_pylist()
    return rows


@dataclass
class ServerKilledRun:
    server: MemoryServer  # running again, on the same port and file
    env: Callable[[], dict[str, str]]  # of a run against the shared Prefect server
    config: Path
    results: Path
    killed_at: int  # entries stored when the server was killed
    first: Ended  # the run during which the server was killed
    first_manifest: dict[str, Any]
    first_retrieval: list[dict[str, Any]]
    first_hypotheses: list[dict[str, Any]]
    rerun: Ended

    @property
    def run_dir(self) -> Path:
        return self.results / RUN_ID


def kill_server_mid_run_then_rerun(
    folder: Path, server: MemoryServer, env: Callable[[], dict[str, str]]
) -> ServerKilledRun:
    config, results = write_config(folder, server.url), folder / "results"
    kill_at = random.Random(SEED).randrange(ENTRIES // 5, ENTRIES // 2)
    victim = start_run(config, results, RUN_ID, env(), "--limit", str(QUESTIONS))
    wait_for_progress(victim, lambda: entries_stored(server.path), kill_at, "entries stored")
    server.kill()
    killed_at = entries_stored(server.path)
    first = finish(victim)
    run_dir = results / RUN_ID
    manifest = json.loads((run_dir / "manifest.json").read_text())
    retrieval = read_rows(run_dir, "retrieval")
    hypotheses = read_rows(run_dir, "hypotheses")

    server.start()  # the same port and SQLite file
    rerun = finish(start_cli(["rerun", RUN_ID, "--results-dir", str(results)], env()))
    return ServerKilledRun(
        server, env, config, results, killed_at, first, manifest, retrieval, hypotheses, rerun
    )
