"""`lme-bench memory serve --transport http` on a loopback port that stays the same across
restarts (runs name their memory system by its URL), so it can be killed and started again on
the same SQLite file."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from tests.conformance.servers import free_port, serve_args, wait_until_listening
from tests.faults.runs import ROOT

READY_TIMEOUT_S = 60.0


class MemoryServer:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "memory.sqlite"
        self.log_path = folder / "server.log"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = serve_args("http", self.path, "--host", "127.0.0.1", "--port", str(self.port))
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *args],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        if wait_until_listening(self.process, self.port, READY_TIMEOUT_S, self.log):
            return
        self.kill()
        raise RuntimeError(f"memory server not ready within {READY_TIMEOUT_S} s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL: no goodbye to its clients, no flush of writes still queued."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=30)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]
