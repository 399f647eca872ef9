"""The processes `make serve` supervises, each in a process group of its own, and the watch on
the make that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import suppress
from pathlib import Path

YOUNG_S = 60.0  # a child that exits sooner is restarted after a growing pause
MAX_RESTART_DELAY_S = 30


class Child:
    def __init__(
        self, name: str, args: list[str], env: dict[str, str], cwd: Path, quiet: str = ""
    ) -> None:
        self.name = name
        self.args = args
        self.env = env
        self.cwd = cwd
        self.quiet = quiet  # "stdout", "stderr" or both: what goes to /dev/null
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.delay = 0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.args,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL if "stdout" in self.quiet else None,
            stderr=subprocess.DEVNULL if "stderr" in self.quiet else None,
            process_group=0,  # a signal to make's group or terminal reaches the supervisor only
        )
        self.started = time.monotonic()

    def exit_code(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def describe_exit(self) -> str:
        code = self.exit_code()
        lived = f"after {time.monotonic() - self.started:.0f} s"
        if code is not None and code < 0:
            return f"was killed by {signal.Signals(-code).name} {lived}"
        return f"exited with status {code} {lived}"

    def next_restart_delay(self) -> int:
        """1 s, doubling up to MAX_RESTART_DELAY_S while the child keeps exiting young."""
        young = time.monotonic() - self.started < YOUNG_S
        self.delay = min(self.delay * 2, MAX_RESTART_DELAY_S) if young and self.delay else 1
        return self.delay

    def signal(self, signum: signal.Signals) -> None:
        """Signal the child's whole group (what it started too), even once the child has gone:
        the group's id cannot be given to another process while one of the group is left."""
        if self.process is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signum)

    def wait_until(self, deadline: float) -> None:
        if self.process is not None:
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=max(0.0, deadline - time.monotonic()))


def _caught_mask(pid: int) -> int | None:
    """The signals `pid` catches (bit n-1 for signal n): Linux's /proc, else BSD or procps ps."""
    with suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    with suppress(OSError, ValueError, subprocess.SubprocessError):
        ps = ["ps", "-o", "sigcatch=", "-p", str(pid)]
        return int(subprocess.run(ps, capture_output=True, text=True, timeout=5).stdout, 16)
    return None


class MakeWatch:
    """make catches SIGINT, SIGTERM and SIGHUP; on receiving one it stops catching it and waits
    for its recipe (SIGTERM it also passes on). So a signal lost from make's mask, or make gone,
    means `make serve` was asked to stop."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    EVERY_S = 0.5

    def __init__(self, pid: int, watched: list[signal.Signals]) -> None:
        self.pid = pid
        self.watched = watched
        self.looked = 0.0

    @classmethod
    def of(cls, pid: int) -> MakeWatch:
        mask = _caught_mask(pid) or 0
        return cls(pid, [s for s in cls.SIGNALS if mask & (1 << (s - 1))])

    def stopped(self) -> str | None:
        if os.getppid() != self.pid:
            return "make exited"
        if not self.watched or time.monotonic() - self.looked < self.EVERY_S:
            return None
        self.looked = time.monotonic()
        mask = _caught_mask(self.pid)
        if mask is None:
            return None
        for signum in self.watched:
            if not mask & (1 << (signum - 1)):
                return f"make received {signum.name}"
        return None
