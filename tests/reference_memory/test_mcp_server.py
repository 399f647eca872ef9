"""The memory MCP server as a real subprocess: over stdio and over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from lme_bench.reference_memory.store import EmbeddedStore

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
READY_DEADLINE_S = 30.0

Connect = Callable[[], AbstractAsyncContextManager[ClientSession]]


def _serve_args(path: Path, *extra: str) -> list[str]:
    return ["-m", "lme_bench_flows.command", "memory", "serve", "--path", str(path), *extra]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    args = _serve_args(tmp_path / "memory.sqlite", "--transport", "http", "--port", str(port))
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=tmp_path, env=ENV, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + READY_DEADLINE_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"server exited: {(tmp_path / 'server.log').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("HTTP memory server not listening after 30 s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _stdio(path: Path) -> Connect:
    params = StdioServerParameters(
        command=sys.executable, args=_serve_args(path), env=ENV, cwd=str(path.parent)
    )

    @asynccontextmanager
    async def connect() -> AsyncIterator[ClientSession]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), READY_DEADLINE_S)
            yield session

    return connect


def _http(url: str) -> Connect:
    @asynccontextmanager
    async def connect() -> AsyncIterator[ClientSession]:
        async with (
            streamable_http_client(url) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), READY_DEADLINE_S)
            yield session

    return connect


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, tmp_path: Path) -> Connect:
    if request.param == "stdio":
        return _stdio(tmp_path / "memory.sqlite")
    url: str = request.getfixturevalue("http_url")
    return _http(url)


def _text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def _ok(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert not result.isError, _text(result)
    return _text(result)


def test_tools_and_schemas(connect: Connect) -> None:
    async def main() -> None:
        async with connect() as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert len(tools) == 13
        search = tools["search_memories"].inputSchema
        assert set(search["properties"]) == {
            "memory_id",
            "query",
            "top_ke",
            "top_kc",
            "include_raw_entries",
        }
        assert sorted(search["required"]) == ["memory_id", "query"]
        defaults = {name: prop.get("default") for name, prop in search["properties"].items()}
        assert (defaults["top_ke"], defaults["top_kc"]) == (5, 2)
        assert defaults["include_raw_entries"] is False
        listing = tools["list_entries"].inputSchema
        assert listing["properties"]["limit"]["default"] == 25
        assert set(listing["properties"]) == {"vault_id", "memory_id", "limit", "before", "after"}
        add = tools["add_entry"].inputSchema
        assert sorted(add["required"]) == ["memory_id", "raw_entry", "summary", "vault_id"]
        prompts = tools["get_default_prompts"].inputSchema
        assert prompts["properties"]["memory_type"]["default"] == "chat"
        assert tools["list_vaults"].inputSchema.get("properties", {}) == {}
        assert all(tool.description for tool in tools.values())

    asyncio.run(main())


def test_round_trip_and_errors(connect: Connect) -> None:
    async def main() -> None:
        async with connect() as session:
            vault = json.loads(await _ok(session, "create_vault", title="lme-mcp-test"))
            memory = json.loads(
                await _ok(
                    session,
                    "create_memory_in_vault",
                    vault_id=vault["vaultId"],
                    title="q1__run",
                    memory_type="CHAT",
                )
            )
            ids = {"vault_id": vault["vaultId"], "memory_id": memory["memoryId"]}
            added = await _ok(
                session,
                "add_entry",
                **ids,
                raw_entry="user: my dog Biscuit is three years old",
                summary="User's dog Biscuit is three years old.",
                tags={"session_key": "s7", "turn_index": "0"},
            )
            assert added == "enqueued"
            assert await _ok(session, "put_context", **ids, content="## Facts\n- dog Biscuit")
            assert await _ok(session, "await_consistency", memory_id=ids["memory_id"]) == (
                "consistent"
            )
            found = json.loads(
                await _ok(session, "search_memories", memory_id=ids["memory_id"], query="Biscuit")
            )
            assert found["count"] == 1
            assert found["entries"][0]["tags"] == {"session_key": "s7", "turn_index": "0"}
            assert "rawEntry" not in found["entries"][0]
            assert found["latestContext"] == "## Facts\n- dog Biscuit"

            # Errors come back as isError results with the message; the server keeps serving.
            bad = await session.call_tool(
                "search_memories", {"memory_id": ids["memory_id"], "query": "x", "top_ke": 99}
            )
            assert bad.isError and "'top_ke' must be between 0 and 25" in _text(bad)
            wrong_type = await session.call_tool(
                "search_memories", {"memory_id": ids["memory_id"], "query": "x", "top_ke": "many"}
            )
            assert wrong_type.isError and "top_ke" in _text(wrong_type)
            missing = await session.call_tool("get_context", {"vault_id": ids["vault_id"]})
            assert missing.isError and "memory_id" in _text(missing)
            unknown = await session.call_tool("get_context", {**ids, "memory_id": "nope"})
            assert unknown.isError and "memory nope not found" in _text(unknown)
            duplicate = await session.call_tool("create_vault", {"title": "lme-mcp-test"})
            assert duplicate.isError and vault["vaultId"] in _text(duplicate)
            assert await _ok(session, "get_context", **ids) == "## Facts\n- dog Biscuit"

            # Rough per-call latency of search over this transport.
            started = time.perf_counter()
            for _ in range(20):
                await _ok(session, "search_memories", memory_id=ids["memory_id"], query="dog")
            per_call = (time.perf_counter() - started) / 20
            print(f"search_memories: {per_call * 1000:.1f} ms per call")
            assert per_call < 0.5

    asyncio.run(main())


def test_stdio_server_stores_queued_writes_when_the_client_leaves(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"

    async def main() -> str:
        async with _stdio(path)() as session:
            vault = json.loads(await _ok(session, "create_vault", title="drain"))
            memory = json.loads(
                await _ok(
                    session,
                    "create_memory_in_vault",
                    vault_id=vault["vaultId"],
                    title="m",
                    memory_type="CHAT",
                )
            )
            for i in range(30):
                await _ok(
                    session,
                    "add_entry",
                    vault_id=vault["vaultId"],
                    memory_id=memory["memoryId"],
                    raw_entry=f"entry {i}",
                    summary=f"entry {i}",
                )
            return str(memory["memoryId"])

    memory_id = asyncio.run(main())
    store = EmbeddedStore(path)
    try:
        assert store.count_entries(memory_id) == 30
    finally:
        store.close()


def test_http_refuses_a_remote_host_without_opt_in(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            *_serve_args(tmp_path / "m.sqlite", "--transport", "http", "--host", "0.0.0.0"),
        ],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--allow-remote" in done.stderr and done.stdout == ""
    assert not (tmp_path / "m.sqlite").exists()
