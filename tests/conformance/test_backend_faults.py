"""The `mcp` backend when things go wrong: a server killed mid-use, a server that is not there,
tool errors. Lost connections are transient (retried); tool errors are permanent."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from lme_bench.backends.mcp_session import McpToolError, MemoryConnectionError
from lme_bench.backends.mycelian_mcp import McpEntryStore
from lme_bench.config.settings import McpSettings
from lme_bench.run.transient import is_transient
from tests.conformance.harness import RUN_ID, unique_title
from tests.conformance.servers import HttpServer, free_port, stdio_settings


def _child_serving(path: Path) -> int:
    """The pid of our own child process serving `path` (the stdio server the backend spawned)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and str(path).encode() in cmdline:
            return int(entry.name)
    raise AssertionError(f"no child process serves {path}")


async def _lose_server(backend: McpEntryStore, kill: object) -> MemoryConnectionError:
    vault = await backend.get_or_create_vault(unique_title("faults"))
    memory = await backend.get_or_create_memory(vault, f"q1__{RUN_ID}")
    assert callable(kill)
    kill()
    started = time.monotonic()
    with pytest.raises(MemoryConnectionError) as caught:
        await backend.search(memory, "anything", top_ke=5)
    assert time.monotonic() - started < 5, "a lost server must fail fast, not at the timeout"
    with pytest.raises(MemoryConnectionError):  # and stays failed: no silent half-session
        await backend.count_entries(memory)
    await backend.close()
    return caught.value


def test_http_server_killed_mid_use(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "server")
    try:
        backend = McpEntryStore(server.settings(timeout_s=20))
        error = asyncio.run(_lose_server(backend, server.stop))
    finally:
        server.stop()
    assert server.url in str(error) and is_transient(error)


def test_stdio_server_killed_mid_use(tmp_path: Path) -> None:
    path = tmp_path / "stdio.sqlite"
    backend = McpEntryStore(stdio_settings(path, timeout_s=20))
    error = asyncio.run(
        _lose_server(backend, lambda: os.kill(_child_serving(path), signal.SIGKILL))
    )
    assert sys.executable in str(error) and "stdio" in str(error) and is_transient(error)


def test_a_hung_server_times_out(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "server")

    async def scenario() -> tuple[MemoryConnectionError, float]:
        backend = McpEntryStore(server.settings(timeout_s=1.5))
        try:
            await backend.get_or_create_vault(unique_title("faults"))
            server.process.send_signal(signal.SIGSTOP)  # alive, but never answers
            started = time.monotonic()
            with pytest.raises(MemoryConnectionError) as caught:
                await backend.get_or_create_vault(unique_title("faults"))
            return caught.value, time.monotonic() - started
        finally:
            await backend.close()

    try:
        error, waited = asyncio.run(scenario())
    finally:
        server.stop()  # SIGKILL ends a stopped process too
    assert 1.4 < waited < 4 and "did not answer" in str(error) and server.url in str(error)
    assert is_transient(error)


@pytest.mark.parametrize(
    "settings",
    [
        McpSettings(url=f"http://127.0.0.1:{free_port()}/mcp", timeout_s=10),
        McpSettings(transport="stdio", command="/nonexistent/memory-server", timeout_s=10),
    ],
    ids=["http-nobody-listening", "stdio-no-such-command"],
)
def test_server_not_there(settings: McpSettings) -> None:
    async def scenario() -> MemoryConnectionError:
        backend = McpEntryStore(settings)
        try:
            with pytest.raises(MemoryConnectionError) as caught:
                await backend.get_or_create_vault("anything")
            return caught.value
        finally:
            await backend.close()

    error = asyncio.run(scenario())
    assert (settings.url or str(settings.command)) in str(error) and is_transient(error)


def test_tool_errors_are_permanent_and_named(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "server")

    async def scenario() -> McpToolError:
        backend = McpEntryStore(server.settings())
        try:
            with pytest.raises(McpToolError) as caught:
                await backend.search("no-such-memory", "query", top_ke=5)
            vault = await backend.get_or_create_vault(unique_title("faults"))  # still answering
            assert vault
            return caught.value
        finally:
            await backend.close()

    try:
        error = asyncio.run(scenario())
    finally:
        server.stop()
    assert error.tool == "search_memories" and "no-such-memory" in error.message
    assert server.url in str(error) and not is_transient(error)
