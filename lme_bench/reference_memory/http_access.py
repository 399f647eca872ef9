"""Who may talk to the memory server over HTTP: loopback binds, Host/Origin allow-lists, a token.

- Host/Origin checking (DNS-rebinding protection) is on for every HTTP bind, however the host is
  spelt: the loopback names (`127.0.0.1`, `localhost`, `[::1]`, any port) are always allowed,
  plus the values given with `--allowed-host` / `--allowed-origin`.
- A bearer token (`LME_MEMORY_TOKEN`) is required with `--allow-remote` and honoured whenever it
  is set: a request without `Authorization: Bearer <token>` gets 401. The comparison takes
  constant time and the token is never logged.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "LME_MEMORY_TOKEN"
TOKEN_MIN_CHARS = 16
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_NAME = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:(\d{1,5}|\*))?")
_ORIGIN = re.compile(r"(https?)://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:(\d{1,5}|\*))?")


class AccessError(ValueError):
    """A bad --allowed-host / --allowed-origin value or token; the message says which."""


def is_loopback(host: str) -> bool:
    """Whether an address to bind is loopback, however spelt (LOCALHOST, [::1], 127.0.0.2)."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _with_any_port(value: str) -> list[str]:
    """`name` allows the name alone (default port) and with any port; `name:port` just that."""
    return [value] if re.search(r":(\d+|\*)$", value) else [value, f"{value}:*"]


def allowed_host(value: str) -> list[str]:
    """Host header patterns for one `--allowed-host NAME[:PORT|:*]` value."""
    text = value.strip().lower()
    if not _NAME.fullmatch(text):
        raise AccessError(
            f"--allowed-host {value!r}: expected NAME, NAME:PORT or NAME:* (e.g."
            " memory.example.org:11546), without scheme or path"
        )
    return _with_any_port(text)


def allowed_origin(value: str) -> list[str]:
    """Origin header patterns for one `--allowed-origin SCHEME://NAME[:PORT|:*]` value."""
    text = value.strip().lower()
    if not _ORIGIN.fullmatch(text):
        raise AccessError(
            f"--allowed-origin {value!r}: expected http(s)://NAME[:PORT] (e.g."
            " https://app.example.org), without path"
        )
    return _with_any_port(text)


def transport_security(
    bind_host: str, hosts: Sequence[str] = (), origins: Sequence[str] = ()
) -> TransportSecuritySettings:
    """Host/Origin checking, on for every bind: loopback names, the bound loopback address
    itself, and the allowed values given."""
    names = [f"{name}:*" for name in LOOPBACK_HOSTS]
    if is_loopback(bind_host):
        bound = bind_host.strip().strip("[]").rstrip(".").lower()
        names.append(f"[{bound}]:*" if ":" in bound else f"{bound}:*")
    allowed_hosts = list(dict.fromkeys(names + [p for h in hosts for p in allowed_host(h)]))
    allowed_origins = [f"http://{name}" for name in names] + [
        p for o in origins for p in allowed_origin(o)
    ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts,
        allowed_origins=list(dict.fromkeys(allowed_origins)),
    )


def check_token(token: str) -> str:
    token = token.strip()
    if len(token) < TOKEN_MIN_CHARS or any(ch.isspace() for ch in token):
        raise AccessError(
            f"{TOKEN_ENV} must hold at least {TOKEN_MIN_CHARS} characters without spaces"
            " (e.g. the output of: python -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    return token


class BearerAuth:
    """ASGI middleware: HTTP requests need `Authorization: Bearer <token>`, else 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"www-authenticate", b'Bearer realm="lme-bench-memory"'),
                    ],
                }
            )
            body = b"401 Unauthorized: send Authorization: Bearer <the server's token>\n"
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        given = [value for name, value in scope["headers"] if name == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self._expected)
