"""The fault suite's shared Prefect server, the environment its runs get, and the run whose
memory server was killed (checked by one scenario, the previous complete run of another)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.memory_server import MemoryServer
from tests.faults.prefect_api import prefect_server
from tests.faults.runs import RunEnv, cli_env
from tests.faults.server_kill import ServerKilledRun, kill_server_mid_run_then_rerun


@pytest.fixture(scope="package")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(API URL, a Prefect home for clients) of one server for the whole suite."""
    with prefect_server(tmp_path_factory.mktemp("prefect-server")) as url:
        yield url, tmp_path_factory.mktemp("prefect-client")


@pytest.fixture
def run_env(prefect_api: tuple[str, Path]) -> RunEnv:
    """The environment of an `lme-bench run` child against the shared server, plus `extra`."""
    url, home = prefect_api

    def env(**extra: str) -> dict[str, str]:
        return cli_env(home, PREFECT_API_URL=url, **extra)

    return env


@pytest.fixture(scope="package")
def server_killed_run(
    prefect_api: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerKilledRun]:
    """A run over MCP whose memory server was killed mid-ingestion, then rerun to completion
    (the server is left running for tests that run it again)."""
    url, home = prefect_api
    folder = tmp_path_factory.mktemp("server-killed")
    server = MemoryServer(folder / "server")
    server.start()
    try:
        yield kill_server_mid_run_then_rerun(
            folder, server, lambda: cli_env(home, PREFECT_API_URL=url)
        )
    finally:
        server.kill()
