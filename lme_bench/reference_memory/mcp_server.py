"""Our embedded memory served over MCP with Mycelian's tool surface (stdio or streamable HTTP).

Every tool forwards to `MemoryService.call`; a `ToolError` comes back as an MCP error result
(`isError`, the message as text) and the server carries on. Nothing but MCP goes to stdout:
logs go to stderr. Streamable HTTP is served at `/mcp`, on 127.0.0.1:11546 by default, with
Host/Origin checks always on and, when a token is given, bearer authentication (http_access.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import uvicorn
from anyio import ClosedResourceError
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent
from pydantic import Field
from starlette.types import ASGIApp

from lme_bench.embeddings import load_embedder
from lme_bench.reference_memory.http_access import BearerAuth, transport_security
from lme_bench.reference_memory.service import MemoryService, ToolError
from lme_bench.reference_memory.store import EmbeddedStore

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 11546
HTTP_PATH = "/mcp"
Transport = Literal["stdio", "http"]

VaultId = Annotated[str, Field(description="the vault's id (vaultId)")]
MemoryId = Annotated[str, Field(description="the memory's id (memoryId)")]
Description = Annotated[str, Field(description="optional free text")]
Time = Annotated[str | None, Field(description="RFC 3339 time, e.g. 2024-05-01T12:00:00Z")]

_INSTRUCTIONS = (
    "Long-term memory organised as vaults holding memories; a memory holds entries (one per "
    "message worth keeping, with a short summary) and a context document. Writes are queued: "
    "call await_consistency(memory_id) before reading what you just wrote."
)


def _text(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], isError=error)


def build_server(
    service: MemoryService,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> FastMCP:
    server = FastMCP(
        "lme-bench-memory",
        instructions=_INSTRUCTIONS,
        log_level="WARNING",
        host=host,
        port=port,
        streamable_http_path=HTTP_PATH,
        # Plain JSON responses instead of one SSE stream per call: ~40% less latency per call
        # (we send no progress or log notifications mid-call).
        json_response=True,
        # Our own settings for every bind: the SDK turns the checks on only for a few spellings.
        transport_security=transport_security(host, allowed_hosts, allowed_origins),
    )

    async def call(tool: str, **arguments: Any) -> CallToolResult:
        given = {name: value for name, value in arguments.items() if value is not None}
        try:
            return _text(await service.call(tool, given))
        except ToolError as exc:
            return _text(str(exc), error=True)
        except Exception as exc:  # a bug or a broken store: report it, keep serving
            log.exception("tool %s failed", tool)
            return _text(f"{tool}: internal error: {type(exc).__name__}: {exc}", error=True)

    tool = server.tool

    @tool(structured_output=False)
    async def create_vault(
        title: Annotated[str, Field(description="≤50 chars: lowercase letters, digits, hyphens")],
        description: Description = "",
    ) -> CallToolResult:
        """Create a vault (a named group of memories); fails if the title exists."""
        return await call("create_vault", title=title, description=description)

    @tool(structured_output=False)
    async def list_vaults() -> CallToolResult:
        """List all vaults as [{vaultId, title}]."""
        return await call("list_vaults")

    @tool(structured_output=False)
    async def list_memories(vault_id: VaultId) -> CallToolResult:
        """List a vault's memories as [{memoryId, title}]."""
        return await call("list_memories", vault_id=vault_id)

    @tool(structured_output=False)
    async def get_memory(vault_id: VaultId, memory_id: MemoryId) -> CallToolResult:
        """Get one memory's details."""
        return await call("get_memory", vault_id=vault_id, memory_id=memory_id)

    @tool(structured_output=False)
    async def create_memory_in_vault(
        vault_id: VaultId,
        title: Annotated[str, Field(description="the memory's title, unique in the vault")],
        memory_type: Annotated[str, Field(description="e.g. CHAT or NOTES")],
        description: Description = "",
    ) -> CallToolResult:
        """Create a memory in a vault; fails if the vault already has one with this title."""
        return await call(
            "create_memory_in_vault",
            vault_id=vault_id,
            title=title,
            memory_type=memory_type,
            description=description,
        )

    @tool(structured_output=False)
    async def add_entry(
        vault_id: VaultId,
        memory_id: MemoryId,
        raw_entry: Annotated[str, Field(description="the message as written")],
        summary: Annotated[str, Field(description="≤512 characters")],
        tags: Annotated[dict[str, str] | None, Field(description="string keys and values")] = None,
    ) -> CallToolResult:
        """Store one entry (one message worth keeping); returns 'enqueued' once it is stored."""
        return await call(
            "add_entry",
            vault_id=vault_id,
            memory_id=memory_id,
            raw_entry=raw_entry,
            summary=summary,
            tags=tags,
        )

    @tool(structured_output=False)
    async def list_entries(
        vault_id: VaultId,
        memory_id: MemoryId,
        limit: Annotated[int, Field(description="1-50")] = 25,
        before: Time = None,
        after: Time = None,
    ) -> CallToolResult:
        """List entries newest first; page with next_before / next_after (one at a time)."""
        return await call(
            "list_entries",
            vault_id=vault_id,
            memory_id=memory_id,
            limit=limit,
            before=before,
            after=after,
        )

    @tool(structured_output=False)
    async def get_entry(
        vault_id: VaultId,
        memory_id: MemoryId,
        entry_id: Annotated[str, Field(description="the entry's id (entryId)")],
    ) -> CallToolResult:
        """Get one entry."""
        return await call("get_entry", vault_id=vault_id, memory_id=memory_id, entry_id=entry_id)

    @tool(structured_output=False)
    async def put_context(
        vault_id: VaultId,
        memory_id: MemoryId,
        content: Annotated[str, Field(description="the whole context document, ≤65,536 chars")],
    ) -> CallToolResult:
        """Store a new version of the memory's context document; returns 'enqueued' once stored."""
        return await call("put_context", vault_id=vault_id, memory_id=memory_id, content=content)

    @tool(structured_output=False)
    async def get_context(vault_id: VaultId, memory_id: MemoryId) -> CallToolResult:
        """Get the latest context document, or 'context not found'."""
        return await call("get_context", vault_id=vault_id, memory_id=memory_id)

    @tool(structured_output=False)
    async def await_consistency(memory_id: MemoryId) -> CallToolResult:
        """Wait until the memory's queued writes are stored; returns 'consistent'."""
        return await call("await_consistency", memory_id=memory_id)

    @tool(structured_output=False)
    async def search_memories(
        memory_id: MemoryId,
        query: Annotated[str, Field(description="a few keywords")],
        top_ke: Annotated[int, Field(description="entries to return, 0-25 (0: contexts only)")] = 5,
        top_kc: Annotated[int, Field(description="context snapshots to return, 1-10")] = 2,
        include_raw_entries: bool = False,
    ) -> CallToolResult:
        """Search a memory's entries and context snapshots, best first."""
        return await call(
            "search_memories",
            memory_id=memory_id,
            query=query,
            top_ke=top_ke,
            top_kc=top_kc,
            include_raw_entries=include_raw_entries,
        )

    @tool(structured_output=False)
    async def get_default_prompts(
        memory_type: Annotated[str, Field(description="only 'chat'")] = "chat",
    ) -> CallToolResult:
        """Get the default prompts for a memory type: capture, context and summary rules."""
        return await call("get_default_prompts", memory_type=memory_type)

    return server


class _ClosedSessionNoise(logging.Filter):
    """Drop the SDK's traceback for a GET stream whose session the client just closed."""

    def filter(self, record: logging.LogRecord) -> bool:
        closed = record.exc_info is not None and isinstance(record.exc_info[1], ClosedResourceError)
        return not (closed and record.getMessage() == "Error in standalone SSE writer")


async def _serve_http(server: FastMCP, token: str | None) -> None:
    """Uvicorn, stopped by SIGINT or SIGTERM without re-raising them, so queued writes drain."""
    settings = server.settings
    app: ASGIApp = server.streamable_http_app()
    if token is not None:
        app = BearerAuth(app, token)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
    )
    web = uvicorn.Server(config)

    def stop(signum: int, frame: object) -> None:
        web.should_exit = True

    # Uvicorn installs its own handlers while serving and, on the way out, restores these and
    # re-sends the signal it caught: ours then only repeat the stop instead of killing us.
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        await web.serve()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _serve(
    server: FastMCP, service: MemoryService, transport: Transport, token: str | None
) -> None:
    try:
        if transport == "stdio":
            task = asyncio.current_task()
            if task is not None:
                with contextlib.suppress(NotImplementedError):
                    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
            await server.run_stdio_async()
        else:
            await _serve_http(server, token)
    finally:
        await service.close()


def serve(
    path: Path | str,
    transport: Transport = "stdio",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    queue_writes: bool = True,
    search: str = "bm25",
    alpha: float = 0.6,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    token: str | None = None,
) -> None:
    """Serve the store at `path` until the client disconnects (stdio) or a signal arrives.

    HTTP: Host/Origin values beyond loopback's must be allowed explicitly; with `token`, every
    request needs `Authorization: Bearer <token>`."""
    embedder = load_embedder("all-MiniLM-L6-v2") if search != "bm25" else None
    store = EmbeddedStore(path, search=search, alpha=alpha, embedder=embedder)
    service = MemoryService(store, queue_writes=queue_writes)
    server = build_server(
        service,
        host=host,
        port=port,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    logging.getLogger("mcp.server.streamable_http").addFilter(_ClosedSessionNoise())
    shown = f"[{host}]" if ":" in host else host
    where = f"http://{shown}:{port}{HTTP_PATH}" if transport == "http" else "stdio"
    access = ", bearer token required" if token is not None and transport == "http" else ""
    print(
        f"lme-bench memory server: {where} (store {store.path}, search {search}{access})",
        file=sys.stderr,
        flush=True,
    )
    try:
        asyncio.run(_serve(server, service, transport, token))
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    finally:
        store.close()
