"""Size and error edges over HTTP: add_entry's own size limit, a request over the HTTP body
limit, and a dead server, each a clear error naming the server (and the limit)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from lme_bench.config import McpSettings
from lme_bench.memory.mcp_session import (
    McpSession,
    McpToolError,
    MemoryConnectionError,
    MemoryRequestRejected,
)
from lme_bench.memory.tool_args import RAW_ENTRY_MAX
from lme_bench.transient import is_transient
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
