"""Stopping a run cleanly on SIGTERM or Ctrl-C: the flow run is marked by Prefect (its own
SIGTERM bridge and KeyboardInterrupt handling run first), then the temporary Prefect server
and every other child process this process started are stopped, and the process exits at
once (128 + the signal), without waiting for task threads still running. What those threads
had stored is durable (the store, checkpoints and task results are written transactionally),
so the same command resumes the run where it stopped. Before it exits, the run's summary.md
and summary.json say it stopped and what it spent and stored (lme_bench/run/stopped.py),
written beside the children's stop and within the same grace.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import NoReturn

from lme_bench.run.stopped import start_stop_summary

CHILD_GRACE_S = 5.0


def _children() -> list[int]:
    """This process's direct children (Linux /proc; none found elsewhere)."""
    me, found = os.getpid(), []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == me:
                found.append(int(entry.name))
    return found


def _stop_children() -> None:
    # Prefect's temporary servers, if its server module is loaded (importing it here would
    # cost every run a second of start-up: flows/early_server.py)
    servers = sys.modules.get("prefect.server.api.server")
    instances = getattr(getattr(servers, "SubprocessASGIServer", None), "_instances", {})
    for server in list(instances.values()):
        with contextlib.suppress(Exception):
            server.stop()
    pending = _children()
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + CHILD_GRACE_S
    while pending and time.monotonic() < deadline:
        time.sleep(0.05)
        pending = [pid for pid in pending if _running(pid)]
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return reaped == 0


def stop_now(signum: int, run_id: str | None) -> NoReturn:
    name = signal.Signals(signum).name
    deadline = time.monotonic() + CHILD_GRACE_S
    summary = start_stop_summary(name)  # written while the children stop, within their grace
    _stop_children()
    again = f"; the same command resumes run {run_id}" if run_id else ""
    print(f"lme-bench: stopped by {name}{again}", file=sys.stderr, flush=True)
    if summary is not None:
        print(f"lme-bench: {summary.result(deadline)}", file=sys.stderr, flush=True)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(128 + signum)


@contextlib.contextmanager
def stopping_cleanly(run_id: str | None) -> Iterator[None]:
    """Within: SIGTERM and Ctrl-C stop the run and its children (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop_now(signum, run_id)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    except KeyboardInterrupt:
        stop_now(signal.SIGINT, run_id)
    finally:
        signal.signal(signal.SIGTERM, previous)
