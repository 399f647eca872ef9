"""Start the recording memory servers: HTTP (http_server.py) or stdio behind stdio_tee.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lme_bench.config.settings import McpSettings
from tests.conformance.servers import free_port, serve_args, wait_until_listening

READY_TIMEOUT_S = 60.0


class RecordingHttpServer:
    """tests.wire.http_server on a loopback port that stays the same across restarts (runs
    name their memory system by its URL), so it can crash and be started again on its file."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / "memory.sqlite"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log_path = folder / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, record: Path, *flags: str) -> None:
        """Serve, recording requests to `record`; `flags`: --no-dedup, --no-queue,
        --crash-after-adds N."""
        args = ["--path", str(self.path), "--port", str(self.port), "--record", str(record)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.wire.http_server", *args, *flags],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        if not wait_until_listening(self.process, self.port, READY_TIMEOUT_S, self.log):
            self.stop()
            raise RuntimeError(f"recording server not ready in {READY_TIMEOUT_S} s:\n{self.log()}")

    def settings(self, timeout_s: float = 30.0) -> McpSettings:
        return McpSettings(transport="streamable_http", url=self.url, timeout_s=timeout_s)

    def wait(self, timeout_s: float = 30.0) -> int:
        """The exit code of a server that ends by itself (a crash)."""
        assert self.process is not None
        return self.process.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait(timeout=30)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


def recording_stdio_settings(path: Path, record: Path, timeout_s: float = 30.0) -> McpSettings:
    """Our stdio server on the store at `path`, every byte sent to it appended to `record`."""
    server = [sys.executable, *serve_args("stdio", path)]
    return McpSettings(
        transport="stdio",
        command=sys.executable,
        args=["-m", "tests.wire.stdio_tee", str(record), *server],
        timeout_s=timeout_s,
    )
