"""Who the HTTP memory server admits: Host/Origin checks for every loopback spelling, and with
--allow-remote a bearer token from LME_MEMORY_TOKEN plus an explicit Host/Origin allow-list."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lme_bench.backends.mcp_session import McpSession, MemoryRequestRejected
from lme_bench.config.settings import McpSettings
from lme_bench.reference_memory.http_access import is_loopback
from tests.cli.in_process import run_command
from tests.conformance.servers import serve_args

TOKEN = "t0k-" + "x7Q2" * 8
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "access-test", "version": "0"},
        },
    }
)


def _env(token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LME_MEMORY_TOKEN"}
    return env | ({"LME_MEMORY_TOKEN": token} if token is not None else {})


def _free_port(address: str) -> int:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, tmp: Path, host: str, connect: str, *extra: str, token: str | None) -> None:
        self.connect = connect
        self.port = _free_port(connect)
        self.log_path = tmp / f"server-{self.port}.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    *serve_args("http", tmp / "m.sqlite", "--host", host),
                    *("--port", str(self.port), *extra),
                ],
                env=_env(token),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log()
            try:
                with socket.create_connection((connect, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server not listening:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def post(self, headers: dict[str, str]) -> int:
        """POST an initialize request with exactly these extra headers; the HTTP status."""
        conn = http.client.HTTPConnection(self.connect, self.port, timeout=30)
        try:
            conn.request(
                "POST",
                "/mcp",
                INITIALIZE,
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    **headers,
                },
            )
            return conn.getresponse().status
        finally:
            conn.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


@pytest.mark.parametrize(
    ("host", "connect"),
    [
        ("LOCALHOST", "127.0.0.1"),
        ("localhost", "127.0.0.1"),
        ("127.0.0.2", "127.0.0.2"),
        ("::1", "::1"),
    ],
)
def test_host_and_origin_are_checked_for_every_loopback_spelling(
    tmp_path: Path, host: str, connect: str
) -> None:
    server = Server(tmp_path, host, connect, token=None)
    shown = f"[{connect}]" if ":" in connect else connect
    try:
        assert server.post({"Host": "evil.example"}) == 421
        assert server.post({"Host": f"evil.example:{server.port}"}) == 421
        assert (
            server.post({"Host": f"{shown}:{server.port}", "Origin": "http://evil.example"}) == 403
        )
        assert server.post({"Host": f"{shown}:{server.port}"}) == 200  # no token: none needed
        assert server.post({"Host": f"localhost:{server.port}"}) == 200
        assert (
            server.post({"Host": f"localhost:{server.port}", "Origin": "http://localhost:3000"})
            == 200
        )
    finally:
        server.stop()


def test_loopback_spellings() -> None:
    for host in ("LOCALHOST", "localhost.", "127.0.0.1", "127.1.2.3", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "10.0.0.1", "localhost.example", "example.org"):
        assert not is_loopback(host), host


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Server]:
    server = Server(
        tmp_path,
        "0.0.0.0",
        "127.0.0.1",
        "--allow-remote",
        "--allowed-host",
        "memory.test",
        "--allowed-origin",
        "https://app.test",
        token=TOKEN,
    )
    yield server
    server.stop()


def test_allow_remote_requires_the_bearer_token_and_the_allow_list(remote: Server) -> None:
    host = {"Host": f"memory.test:{remote.port}"}
    assert remote.post(host) == 401
    assert remote.post(host | {"Authorization": "Bearer " + TOKEN[:-1] + "y"}) == 401
    assert remote.post(host | {"Authorization": TOKEN}) == 401  # the scheme is required
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert remote.post(host | bearer) == 200
    assert remote.post({"Host": "memory.test"} | bearer) == 200
    assert remote.post(host | bearer | {"Origin": "https://app.test"}) == 200
    assert remote.post({"Host": f"evil.example:{remote.port}"} | bearer) == 421
    assert remote.post(host | bearer | {"Origin": "http://evil.example"}) == 403
    assert TOKEN not in remote.log()


def test_our_client_sends_the_token_from_headers_from_env(
    remote: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LME_MEMORY_TOKEN", TOKEN)
    url = f"http://127.0.0.1:{remote.port}/mcp"

    async def main() -> None:
        with_token = McpSession(
            McpSettings(
                url=url, headers_from_env={"Authorization": "Bearer LME_MEMORY_TOKEN"}, timeout_s=30
            )
        )
        try:
            assert json.loads(await with_token.call("list_vaults", {})) == []
        finally:
            await with_token.close()
        without = McpSession(McpSettings(url=url, timeout_s=30))
        try:
            with pytest.raises(MemoryRequestRejected, match=r"127\.0\.0\.1:\d+/mcp.*401.*Bearer"):
                await without.call("list_vaults", {})
        finally:
            await without.close()

    asyncio.run(main())


def test_a_token_set_on_loopback_is_required_too(tmp_path: Path) -> None:
    server = Server(tmp_path, "127.0.0.1", "127.0.0.1", token=TOKEN)
    try:
        host = {"Host": f"127.0.0.1:{server.port}"}
        assert server.post(host) == 401
        assert server.post(host | {"Authorization": f"Bearer {TOKEN}"}) == 200
    finally:
        server.stop()


def _refused(
    tmp_path: Path,
    token: str | None,
    *extra: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """`lme-bench memory serve` refusing to start (in this process: it stops before serving)."""
    if token is None:
        monkeypatch.delenv("LME_MEMORY_TOKEN", raising=False)
    else:
        monkeypatch.setenv("LME_MEMORY_TOKEN", token)
    _, module, *args = serve_args("http", tmp_path / "m.sqlite", "--host", "0.0.0.0", *extra)
    assert module == "lme_bench_flows.command"
    done = run_command(capsys, monkeypatch, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert not (tmp_path / "m.sqlite").exists()
    return done.stderr


def test_allow_remote_refuses_to_start_without_token_or_allowed_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(token: str | None, *extra: str) -> str:
        return _refused(tmp_path, token, *extra, capsys=capsys, monkeypatch=monkeypatch)

    no_token = refused(None, "--allow-remote", "--allowed-host", "memory.test")
    assert "LME_MEMORY_TOKEN" in no_token
    assert "--allowed-host" in refused(TOKEN, "--allow-remote")
    assert "at least 16" in refused("short", "--allow-remote", "--allowed-host", "m.test")
    bad = refused(TOKEN, "--allow-remote", "--allowed-host", "http://memory.test/mcp")
    assert "--allowed-host 'http://memory.test/mcp'" in bad and TOKEN not in bad
