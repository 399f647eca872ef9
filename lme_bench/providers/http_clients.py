"""HTTP clients for model providers that any event loop may use.

Real providers keep connections open between requests, and an httpx connection belongs to the
event loop that opened it. A run calls models from many loops (each task's `asyncio.run`, a loop
per synchronous call of a memory system), so a client whose kept-alive connection was opened on
one loop fails on the next ("Event loop is closed"). LangChain's OpenAI model makes exactly that
mistake by default: it caches one async client per process.

`model_http_client()` returns one process-wide `httpx.AsyncClient` per proxy whose transport keeps
a connection pool per loop: a request goes out through its own loop's pool, and each pool is
closed as its loop ends (lme_bench.common.loop_end). Nothing is ever used on a loop other than
the one that made it, and callers never close the shared client.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import ssl
import threading
import urllib.request
import weakref
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import openai

from lme_bench.common.loop_end import at_loop_end

# The HTTP library the installed openai SDK is built on (openai 3 uses httpx2, a drop-in copy of
# httpx): its clients, transports and errors must be the SDK's own, so timeouts and dropped
# connections surface as the SDK's error types.
if TYPE_CHECKING or int(openai.__version__.split(".")[0]) >= 3:
    import httpx2 as httpx
else:
    import httpx

# The openai SDK's own pool sizes; keep-alive probes so a silently dead peer is noticed.
LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100, keepalive_expiry=5.0)
SOCKET_OPTIONS = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()  # loading the CA bundle costs milliseconds: once


class LoopLocalTransport(httpx.AsyncBaseTransport):
    """Sends each request through a connection pool of the loop it runs on."""

    def __init__(self, proxy: str | None = None) -> None:
        self.proxy = proxy
        self._lock = threading.Lock()
        self._pools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport
        ] = weakref.WeakKeyDictionary()

    def _pool(self) -> httpx.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        with self._lock:
            pool = self._pools.get(loop)
            if pool is not None:
                return pool
            pool = self._pools[loop] = httpx.AsyncHTTPTransport(
                verify=_ssl_context(),
                limits=LIMITS,
                proxy=self.proxy,
                socket_options=SOCKET_OPTIONS,
            )
        at_loop_end(functools.partial(self._close, loop))
        return pool

    async def _close(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            pool = self._pools.pop(loop, None)
        if pool is not None:
            await pool.aclose()

    def has_pool(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether `loop` has a pool open (it sent a request and has not ended)."""
        with self._lock:
            return loop in self._pools

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._pool().handle_async_request(request)

    async def aclose(self) -> None:
        """Close this loop's pool (others close as their loops end)."""
        await self._close(asyncio.get_running_loop())


def environment_proxy(base_url: str | None) -> str | None:
    """The proxy the environment names for `base_url` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY,
    NO_PROXY), as httpx's own clients would use; None for a direct connection."""
    parts = urlsplit(base_url or "https://api.openai.com/v1")
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


_clients: dict[str | None, httpx.AsyncClient] = {}
_clients_lock = threading.Lock()


def model_http_client(base_url: str | None) -> httpx.AsyncClient:
    """The process's async client for requests to `base_url` (timeouts are set per request by
    the SDKs that use it). Shared: never close it."""
    proxy = environment_proxy(base_url)
    with _clients_lock:
        client = _clients.get(proxy)
        if client is None:
            client = _clients[proxy] = httpx.AsyncClient(
                transport=LoopLocalTransport(proxy), follow_redirects=True
            )
        return client
