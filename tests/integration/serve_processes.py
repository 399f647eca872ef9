"""`make serve` started as a user would (in its own process group, or under a terminal of its
own), and what the tests read of its processes and ports, from Linux's /proc."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import socket
import subprocess
import termios
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from tests.integration.prefect_server import BIN, ROOT, clean_environ, free_port

START_TIMEOUT_S = 240.0  # a Prefect server answers after ~6 s idle, ~60 s on a busy machine


class Entry(NamedTuple):
    parent: int
    state: str  # Z: a zombie, dead
    session: int


def process_table() -> dict[int, Entry]:
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            table[int(stat.parent.name)] = Entry(int(fields[1]), fields[0], int(fields[3]))
    return table


def descendants(pid: int) -> set[int]:
    table = process_table()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, entry in table.items() if entry.parent in frontier}
        found |= frontier
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie left for a parent or init to reap."""
    entry = process_table().get(pid)
    return entry is not None and entry.state != "Z"


def command(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")).decode()
    except OSError:
        return ""


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class Served:
    make: subprocess.Popen[bytes]
    log: Path
    port: int
    files_port: int
    terminal: int | None  # the master side of its terminal, when it has one
    seen: set[int] = field(default_factory=set)  # every process of it seen so far

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/health"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def processes(self) -> set[int]:
        now = {pid for pid in descendants(self.make.pid) if running(pid)}
        self.seen |= now
        return now

    def workers(self) -> set[int]:
        return {pid for pid in self.processes() if " worker start " in command(pid)}

    def wait_for(
        self, what: str, ready: Callable[[], bool], timeout: float = START_TIMEOUT_S
    ) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.make.poll() is None, (
                f"make exited ({self.make.returncode}) {what}:\n" + (self.output()[-4000:])
            )
            assert time.monotonic() < deadline, f"not {what} in {timeout:.0f} s:\n{self.output()}"
            time.sleep(0.5)

    def wait_started(self) -> None:
        self.wait_for("started", lambda: "Result files:" in self.output())
        self.wait_for("healthy", lambda: answers(self.health_url))
        self.wait_for("with a worker", lambda: bool(self.workers()))

    def left_after(self, timeout: float) -> tuple[set[int], list[int]]:
        """Within `timeout`: the processes of it still running and the ports still bound."""
        deadline = time.monotonic() + timeout
        while True:
            left = {pid for pid in self.seen if running(pid)}
            if self.make.poll() is None:
                left.add(self.make.pid)
            ports = [port for port in (self.port, self.files_port) if listening(port)]
            if (not left and not ports) or time.monotonic() > deadline:
                return left, ports
            time.sleep(0.2)


def kill_session(leader: subprocess.Popen[bytes]) -> None:
    """SIGKILL whatever is left in the session `leader` was started in (its children have
    process groups of their own), and reap it."""
    for pid, entry in process_table().items():
        if entry.session == leader.pid and entry.state != "Z":
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    leader.wait(timeout=30)


def _copy(master: int, log: Path) -> None:
    with log.open("ab") as out:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every process holding the terminal has gone
                return
            if not chunk:
                return
            out.write(chunk)
            out.flush()


def _take_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # stdin, the terminal's slave side, becomes ours


@contextmanager
def make_serve(tmp_path: Path, terminal: bool = False) -> Iterator[Served]:
    """`make -C <project> serve VENV=<this venv>` on free ports with its own PREFECT_HOME and
    results folder; whatever of it is left at the end is SIGKILLed."""
    venv = BIN.parent
    env = clean_environ() | {
        "PREFECT_PORT": str(free_port()),
        "FILES_PORT": str(free_port()),
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "LME_RUN__RESULTS_DIR": str(tmp_path / "results"),
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "PYTHONUNBUFFERED": "1",
    }
    # -o: never reinstall the venv first, whatever the stamp's age
    args = ["make", "-C", str(ROOT), "-o", str(venv / ".installed"), "serve", f"VENV={venv}"]
    log = tmp_path / "serve.log"
    master = None
    if terminal:
        master, slave = pty.openpty()
        make = subprocess.Popen(
            args,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=_take_terminal,
        )
        os.close(slave)
        log.touch()
        threading.Thread(target=_copy, args=(master, log), daemon=True).start()
    else:
        with log.open("wb") as out:
            make = subprocess.Popen(
                args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
    served = Served(make, log, int(env["PREFECT_PORT"]), int(env["FILES_PORT"]), master)
    try:
        yield served
    finally:
        kill_session(make)
        if master is not None:
            os.close(master)
