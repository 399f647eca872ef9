"""The tool-level client the conformance suite talks through, one implementation per transport.

`call(tool, **args)` returns the tool's result parsed (JSON, or the plain word such as
`enqueued`) and raises `ToolCallError` carrying the server's message when the tool fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from lme_bench.backends.mcp_session import McpSession, McpToolError, parse_text
from lme_bench.config.settings import McpSettings
from lme_bench.reference_memory.service import MemoryService, ToolError
from lme_bench.reference_memory.store import EmbeddedStore


class ToolCallError(Exception):
    """A tool reported an error; `message` is what the server said."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message


class ToolClient(Protocol):
    name: str

    async def call(self, tool: str, **args: Any) -> Any: ...

    async def close(self) -> None: ...


class InProcessClient:
    """`MemoryService` over an `EmbeddedStore`, called directly (no MCP)."""

    name = "in-process"

    def __init__(self, path: Path) -> None:
        self.store = EmbeddedStore(path)
        self.service = MemoryService(self.store)

    async def call(self, tool: str, **args: Any) -> Any:
        try:
            return parse_text(await self.service.call(tool, args))
        except ToolError as exc:
            raise ToolCallError(tool, str(exc)) from None

    async def close(self) -> None:
        await self.service.close()
        self.store.close()


class McpClient:
    """Any MCP server, through the same persistent session the `mcp` backend uses."""

    def __init__(self, name: str, settings: McpSettings) -> None:
        self.name = name
        self.session = McpSession(settings)

    async def call(self, tool: str, **args: Any) -> Any:
        try:
            return parse_text(await self.session.call(tool, args))
        except McpToolError as exc:
            raise ToolCallError(tool, exc.message) from None

    async def close(self) -> None:
        await self.session.close()
