"""The conformance fixture: every test runs once per implementation of the memory tools.

in-process (MemoryService called directly, a fresh store per test), our server over stdio and
over streamable HTTP (one server and one persistent session each, for the whole test session),
and an external server at $LME_CONFORMANCE_URL (e.g. a real Mycelian) when that is set.
Titles carry a per-run id, so tests sharing a server (or a long-lived external one) never collide.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lme_bench.config.settings import McpSettings
from tests.conformance.clients import InProcessClient, McpClient
from tests.conformance.harness import Implementation, LoopThread
from tests.conformance.servers import HttpServer, stdio_settings

EXTERNAL_URL = os.environ.get("LME_CONFORMANCE_URL")


@pytest.fixture(scope="session")
def loop_thread() -> Iterator[LoopThread]:
    runner = LoopThread()
    yield runner
    runner.stop()


@pytest.fixture(scope="session")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path_factory.mktemp("http-server"))
    yield server
    server.stop()


def _shared(runner: LoopThread, name: str, settings: McpSettings) -> Iterator[McpClient]:
    client = McpClient(name, settings)
    yield client
    runner.run(client.close())


@pytest.fixture(scope="session")
def stdio_client(
    loop_thread: LoopThread, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpClient]:
    path = tmp_path_factory.mktemp("stdio-server") / "memory.sqlite"
    yield from _shared(loop_thread, "stdio", stdio_settings(path))


@pytest.fixture(scope="session")
def http_client(loop_thread: LoopThread, http_server: HttpServer) -> Iterator[McpClient]:
    yield from _shared(loop_thread, "http", http_server.settings())


@pytest.fixture(scope="session")
def external_client(loop_thread: LoopThread) -> Iterator[McpClient]:
    if not EXTERNAL_URL:
        pytest.skip("external server: set LME_CONFORMANCE_URL=http://host:port/mcp to run")
    settings = McpSettings(transport="streamable_http", url=EXTERNAL_URL, timeout_s=120)
    yield from _shared(loop_thread, "external", settings)


@pytest.fixture(params=["in-process", "stdio", "http", "external"])
def tools(
    request: pytest.FixtureRequest, loop_thread: LoopThread, tmp_path: Path
) -> Implementation:
    name = request.param
    if name == "in-process":
        path = tmp_path / "memory.sqlite"
        return Implementation(name, loop_thread, connect=lambda: InProcessClient(path))
    shared = request.getfixturevalue(f"{name}_client")
    return Implementation(name, loop_thread, shared=shared)
