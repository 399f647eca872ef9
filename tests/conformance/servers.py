"""Our memory server as a child process: stdio settings, and an HTTP server on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lme_bench.config.settings import McpSettings

READY_DEADLINE_S = 30.0


def serve_args(transport: str, path: Path, *extra: str) -> list[str]:
    return [
        "-m",
        "lme_bench_flows.command",
        "memory",
        "serve",
        "--transport",
        transport,
        "--path",
        str(path),
        *extra,
    ]


def stdio_settings(path: Path, timeout_s: float = 30.0) -> McpSettings:
    return McpSettings(
        transport="stdio",
        command=sys.executable,
        args=serve_args("stdio", path),
        timeout_s=timeout_s,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(
    process: subprocess.Popen[bytes], port: int, timeout_s: float, log: Callable[[], str]
) -> bool:
    """True once 127.0.0.1:`port` accepts connections, False after `timeout_s`; raises if
    `process` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"memory server exited early:\n{log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class HttpServer:
    """`lme-bench memory serve --transport http` on 127.0.0.1, its own SQLite file and log."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "memory.sqlite"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log_path = folder / "server.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    *serve_args("http", self.path, "--host", "127.0.0.1", "--port", str(self.port)),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        if wait_until_listening(self.process, self.port, READY_DEADLINE_S, self.log):
            return
        self.stop()
        raise RuntimeError(f"memory server not ready within {READY_DEADLINE_S} s:\n{self.log()}")

    def settings(self, timeout_s: float = 30.0) -> McpSettings:
        return McpSettings(transport="streamable_http", url=self.url, timeout_s=timeout_s)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Kill the server (SIGKILL: no goodbye to its clients) and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
