"""Size and error edges: add_entry's own size limit, a request over the HTTP body limit and a
dead server, each a clear error naming the server (and the limit); a busy server is retried."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from lme_bench.backends.mcp_session import (
    McpSession,
    McpToolError,
    MemoryConnectionError,
    MemoryRequestRejected,
    MemoryServerBusy,
)
from lme_bench.config.settings import McpSettings
from lme_bench.reference_memory.tool_args import RAW_ENTRY_MAX
from lme_bench.run.transient import is_transient
from tests.conformance.servers import HttpServer, free_port


async def _memory(session: McpSession) -> dict[str, str]:
    vault = json.loads(await session.call("create_vault", {"title": "limits"}))["vaultId"]
    created = await session.call(
        "create_memory_in_vault", {"vault_id": vault, "title": "m", "memory_type": "CHAT"}
    )
    return {"vault_id": vault, "memory_id": json.loads(created)["memoryId"]}


def test_entry_size_limits_over_http(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "server")

    async def main() -> None:
        session = McpSession(server.settings())
        try:
            ids = await _memory(session)
            at_limit = "x" * RAW_ENTRY_MAX
            await session.call("add_entry", {**ids, "raw_entry": at_limit, "summary": "big"})
            with pytest.raises(McpToolError, match=r"raw_entry' must be at most 262,144 char"):
                await session.call(
                    "add_entry", {**ids, "raw_entry": at_limit + "x", "summary": "too big"}
                )
            with pytest.raises(McpToolError, match=r"tags' must hold at most 16,384 char"):
                await session.call(
                    "add_entry",
                    {**ids, "raw_entry": "r", "summary": "s", "tags": {"k": "v" * 16_384}},
                )
            await session.call("await_consistency", {"memory_id": ids["memory_id"]})
            page = json.loads(await session.call("list_entries", {**ids, "limit": 50}))
            assert [e["summary"] for e in page["entries"]] == ["big"]  # the session lives on

            # Over the HTTP body limit: the server answers 413 and the SDK drops the session.
            with pytest.raises(MemoryRequestRejected) as caught:
                await session.call(
                    "add_entry", {**ids, "raw_entry": "y" * (5 * 2**20), "summary": "huge"}
                )
            message = str(caught.value)
            assert server.url in message and "413" in message and "4 MiB" in message
            assert not is_transient(caught.value)
        finally:
            await session.close()
        again = McpSession(server.settings())  # the server itself kept serving
        try:
            assert len(json.loads(await again.call("list_vaults", {}))) == 1
        finally:
            await again.close()

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_a_dead_server_fails_a_call_in_seconds_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there

    async def call(settings: McpSettings) -> BaseException:
        session = McpSession(settings)
        try:
            await session.call("list_vaults", {})
        except Exception as exc:
            return exc
        finally:
            await session.close()
        raise AssertionError("the call succeeded")

    started = time.monotonic()
    error = asyncio.run(call(McpSettings(url=url, timeout_s=60)))
    assert time.monotonic() - started < 10
    assert isinstance(error, MemoryConnectionError) and url in str(error)

    server = HttpServer(tmp_path / "killed")

    async def killed_under_a_session() -> tuple[BaseException, float]:
        session = McpSession(server.settings(timeout_s=60))
        try:
            await session.call("list_vaults", {})
            server.stop()  # SIGKILL
            started = time.monotonic()
            try:
                await session.call("list_vaults", {})
            except Exception as exc:
                return exc, time.monotonic() - started
            raise AssertionError("the call succeeded")
        finally:
            await session.close()

    try:
        error, seconds = asyncio.run(killed_under_a_session())
    finally:
        server.stop()
    assert seconds < 10
    assert isinstance(error, MemoryConnectionError) and server.url in str(error)


class _BusyServer:
    """A live session: add_entry answers the server's queue-full error, other tools an error
    that only quotes those words."""

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        text = f"{tool}: server busy: 10000 writes are waiting to be stored; try again shortly"
        if tool != "add_entry":
            text = f"{tool}: memory 'server busy: x' not found"
        return CallToolResult(content=[TextContent(type="text", text=text)], isError=True)


def test_server_busy_is_a_retried_error_and_other_tool_errors_are_not() -> None:
    async def main() -> tuple[BaseException, BaseException]:
        session = McpSession(McpSettings(url="http://127.0.0.1:11546/mcp"))
        session._session = _BusyServer()  # type: ignore[assignment]
        session._owner = asyncio.create_task(asyncio.Event().wait())
        session._ready.set()
        errors = []
        for tool in ("add_entry", "get_context"):
            try:
                await session.call(tool, {})
            except Exception as exc:
                errors.append(exc)
        session._owner.cancel()
        return errors[0], errors[1]

    busy, other = asyncio.run(main())
    assert isinstance(busy, MemoryServerBusy) and is_transient(busy)
    assert "server busy" in str(busy) and "127.0.0.1:11546/mcp" in str(busy)
    # only the tool's own busy answer counts: a message that merely mentions it is permanent
    assert isinstance(other, McpToolError) and not is_transient(other)
