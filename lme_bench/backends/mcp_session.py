"""One persistent MCP client session to a memory server, shared by every call of a backend.

The session lives in a background task that opens it (through langchain-mcp-adapters), holds it
until `close()`, and exits it in the task that entered it (anyio's cancel scopes insist on that).
Calls may come from any task of the same event loop; each races the owner task, so a server that
goes away fails the call at once instead of leaving it waiting for a reply that never comes.

Errors: a tool that reports an error -> `McpToolError` (permanent: bad input or a server-side
refusal, naming the tool and the server's message). An HTTP refusal that ends the session (401
no or wrong token, 403/421 Origin/Host not allowed, 413 request over the server's body limit) ->
`MemoryRequestRejected` (permanent, naming the server and what to change). A lost connection,
a server that cannot be started or reached, or a call past `timeout_s` -> `MemoryConnectionError`
(a `ConnectionError`, so `lme_bench.run.transient.is_transient` retries it); so does a tool error
starting `server busy:` (its write queue stayed full). Header values never appear in messages
or logs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import anyio
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.sessions import Connection
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from mcp.types import CONNECTION_CLOSED, TextContent

from lme_bench.config.settings import ConfigError, McpSettings

log = logging.getLogger(__name__)

_SERVER = "memory"
# What the SDK's in-memory streams raise once the transport under them has ended.
_STREAM_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
_CLOSE_WAIT_S = 5.0  # a hung server must not hold up shutdown for long
# JSON-RPC error codes that mean the transport, not the tool, failed: the SDK's "connection
# closed", request timeouts (HTTP 408 as the Python SDK reports it, -32001 as TypeScript does),
# and the streamable HTTP client's "session terminated" (the server forgot our session).
_TRANSPORT_CODES = frozenset({CONNECTION_CLOSED, 408, -32001, 32600})


class McpToolError(RuntimeError):
    """A memory tool answered with an error. Permanent: retrying the same call will not help."""

    def __init__(self, tool: str, server: str, message: str) -> None:
        super().__init__(f"memory tool {tool} on {server} failed: {message}")
        self.tool = tool
        self.server = server
        self.message = message


class MemoryConnectionError(ConnectionError):
    """The memory server could not be reached, went away, or did not answer in time."""


class MemoryRequestRejected(RuntimeError):
    """The server refused the request at the HTTP level. Permanent: not retried."""


class MemoryServerBusy(MemoryConnectionError):
    """The server's write queue stayed full: worth retrying later."""


BODY_LIMIT = "4 MiB"  # the MCP SDK's default request body limit, which our server keeps
_REJECTIONS = {
    401: "HTTP 401 Unauthorized: send the server's bearer token, e.g. [memory.params]"
    ' headers_from_env = { Authorization = "Bearer LME_MEMORY_TOKEN" }',
    403: "HTTP 403 Invalid Origin header: the server does not allow this Origin"
    " (our server: --allowed-origin)",
    413: f"HTTP 413 Request Entity Too Large: the request is over the server's body limit"
    f" ({BODY_LIMIT} for our server and the MCP SDK's default; our add_entry takes at most"
    " 262,144 characters of raw_entry)",
    421: "HTTP 421 Invalid Host header: the server does not allow the host in this URL"
    " (our server: --allowed-host)",
}


def _http_status(error: BaseException) -> int | None:
    """The status of an HTTP error response somewhere in `error` (a group or its causes)."""
    leaf = _leaf(error)
    response = getattr(leaf, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def describe_server(settings: McpSettings) -> str:
    """The server as users named it, without credentials (no userinfo, query or headers)."""
    if settings.transport == "stdio":
        return "stdio:" + shlex.join([settings.command or "", *settings.args])
    parts = urlsplit(settings.url or "")
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def header_spec(spec: str) -> tuple[str, str]:
    """A headers_from_env value: `VARIABLE` (the header is its value) or `PREFIX VARIABLE`, e.g.
    `Bearer LME_MEMORY_TOKEN` (the header is `Bearer <value>`)."""
    prefix, _, variable = spec.strip().rpartition(" ")
    return prefix.strip(), variable


def connection_config(settings: McpSettings) -> Connection:
    """The langchain-mcp-adapters connection dict; header values from the environment."""
    if settings.transport == "stdio":
        if not settings.command:
            raise ConfigError("[memory.params] transport = 'stdio' needs command")
        return {
            "transport": "stdio",
            "command": settings.command,
            "args": list(settings.args),
            "env": dict(settings.env) if settings.env else None,
        }
    if not settings.url:
        raise ConfigError("[memory.params] transport = 'streamable_http' needs url")
    headers = dict(settings.headers)
    for header, spec in settings.headers_from_env.items():
        prefix, variable = header_spec(spec)
        value = os.environ.get(variable, "").strip()
        if not value:
            raise ConfigError(
                f"[memory.params] headers_from_env: header {header!r} needs environment"
                f" variable {variable}, which is not set"
            )
        headers[header] = f"{prefix} {value}" if prefix else value
    return {
        "transport": "streamable_http",
        "url": settings.url,
        "headers": headers or None,
        "timeout": timedelta(seconds=settings.timeout_s),
    }


def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _explain(error: BaseException) -> str:
    leaf = _leaf(error)
    return f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__


def parse_text(text: str) -> Any:
    """A tool's text result: JSON when it is JSON, else the plain word (e.g. `enqueued`)."""
    try:
        return json.loads(text)
    except ValueError:
        return text.strip()


class McpSession:
    """A lazily opened, persistent session: `await call(tool, args)` returns the tool's text."""

    def __init__(self, settings: McpSettings) -> None:
        self.settings = settings
        self.server = describe_server(settings)
        self._connection = connection_config(settings)  # config errors surface right away
        self._owner: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._session: ClientSession | None = None
        self._failure: str | None = None
        self._rejected: int | None = None  # an HTTP status in _REJECTIONS that ended the session
        self._timed_out = False  # a server that missed a deadline gets little time to close
        self.input_schemas: dict[str, dict[str, Any]] = {}

    async def _own(self) -> None:
        client = MultiServerMCPClient({_SERVER: self._connection})
        try:
            async with client.session(_SERVER) as session:
                listed = await session.list_tools()
                self.input_schemas = {tool.name: dict(tool.inputSchema) for tool in listed.tools}
                self._session = session
                self._ready.set()
                log.debug("connected to MCP memory server %s", self.server)
                await self._closing.wait()
        except Exception as exc:
            if not self._closing.is_set():
                self._failure = _explain(exc)
                status = _http_status(exc)
                self._rejected = status if status in _REJECTIONS else None
        finally:
            self._session = None
            if self._failure is None and not self._closing.is_set():
                self._failure = "the session ended"
            self._ready.set()

    def _rejection(self, tool: str) -> MemoryRequestRejected:
        assert self._rejected is not None
        return MemoryRequestRejected(
            f"MCP memory server {self.server} refused {tool}: {_REJECTIONS[self._rejected]};"
            " not retried"
        )

    async def open(self, tool: str = "the session") -> ClientSession:
        """The live session, opening it on first use."""
        if self._rejected is not None:
            raise self._rejection(tool)
        if self._failure is not None:
            raise MemoryConnectionError(
                f"MCP memory server {self.server} is unavailable: {self._failure}"
            )
        if self._closing.is_set():
            raise MemoryConnectionError(f"MCP memory server {self.server}: backend closed")
        if self._owner is None:
            self._owner = asyncio.create_task(self._own(), name=f"mcp-session {self.server}")
        try:
            await asyncio.wait_for(self._ready.wait(), self.settings.timeout_s)
        except TimeoutError:
            raise MemoryConnectionError(
                f"MCP memory server {self.server}: no session within {self.settings.timeout_s:g} s"
            ) from None
        if self._session is None:
            if self._rejected is not None:
                raise self._rejection(tool)
            raise MemoryConnectionError(
                f"MCP memory server {self.server} is not reachable: {self._failure}"
            )
        return self._session

    def _lost(self, tool: str, detail: str | None) -> MemoryConnectionError:
        """The session is gone: remember why, so later calls fail at once."""
        self._failure = self._failure or detail or "the connection closed"
        self._closing.set()
        return MemoryConnectionError(
            f"lost the connection to MCP memory server {self.server} during {tool}: {self._failure}"
        )

    def _gone(self, tool: str, detail: str | None) -> Exception:
        """The session ended under a call: an HTTP refusal if that is why, else a lost one."""
        if self._rejected is not None:
            self._closing.set()
            return self._rejection(tool)
        return self._lost(tool, detail)

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call one tool; returns the text of its content blocks, joined."""
        session = await self.open(tool)
        assert self._owner is not None
        request = asyncio.ensure_future(session.call_tool(tool, arguments))
        try:
            done, _ = await asyncio.wait(
                {request, self._owner},
                timeout=self.settings.timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except asyncio.CancelledError:
            request.cancel()
            raise
        if request not in done:
            request.cancel()
            if self._owner in done:
                raise self._gone(tool, self._failure)
            self._timed_out = True
            raise MemoryConnectionError(
                f"MCP memory server {self.server} did not answer {tool} within"
                f" {self.settings.timeout_s:g} s"
            )
        if request.cancelled():  # the SDK dropped the session under the call
            await asyncio.sleep(0)  # let the owner task record why
            raise self._gone(tool, self._failure or "the server dropped the session")
        try:
            result = request.result()
        except McpError as exc:
            if exc.error.code in _TRANSPORT_CODES:
                raise self._gone(tool, exc.error.message) from None
            raise McpToolError(tool, self.server, exc.error.message) from None
        except (OSError, EOFError, *_STREAM_GONE) as exc:
            raise self._gone(tool, _explain(exc)) from None
        text = "".join(block.text for block in result.content if isinstance(block, TextContent))
        if result.isError:
            if text.startswith(f"{tool}: server busy:"):
                raise MemoryServerBusy(f"MCP memory server {self.server}: {text}")
            raise McpToolError(tool, self.server, text or "error without a message")
        return text

    async def close(self) -> None:
        self._closing.set()
        owner, self._owner = self._owner, None
        if owner is None or owner.done():
            return
        try:
            await asyncio.wait_for(owner, 0.5 if self._timed_out else _CLOSE_WAIT_S)
        except (TimeoutError, asyncio.CancelledError):
            owner.cancel()
        except Exception as exc:  # pragma: no cover - _own swallows its errors
            log.debug("closing MCP session to %s: %s", self.server, _explain(exc))
