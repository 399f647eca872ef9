"""Prefect's temporary server for `lme-bench run`, started before anything imports Prefect.

Without PREFECT_API_URL, Prefect starts a temporary server (uvicorn serving
`prefect.server.api.server:create_app` in a child process) when the flow begins, and waits for
it: the server module imported in this process first, then in the child, then the child's
database set up, one after the other. Here the same child is started first thing, on a free
port of Prefect's range, so it comes up on the other core while this process imports Prefect
and checks the dataset. Once Prefect is imported and its settings say the run needs a temporary
server, the run talks to the child through a settings context naming it (what Prefect's own
test harness does), so this process never imports Prefect's server module; the child is
stopped when the process exits, or by flows/stopping.py. Otherwise, or if the child did not
come up, it is stopped and Prefect does as it would have. Its start line is held back until
the data are known to be good, so bad input still ends in one error line. It runs without the
event persister, triggers and actions (a temporary server has no event feed or automations to
serve). Its output reaches the terminal while the run lasts; what it prints once the run has
ended (shutting down, a request the exiting run left half-done cancelled in its database query)
goes to PREFECT_HOME/temporary-server-shutdown.log, so no traceback follows a completed run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

PORTS = range(8000, 9000)  # Prefect's own range for temporary servers
STOP_S = 5.0


def _free_port() -> int | None:
    for _ in range(10):
        port = random.choice(PORTS)
        with contextlib.closing(socket.socket()) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    return None


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


class EarlyServer:
    """The child server, started before Prefect is imported (or nothing, when the environment
    already names a Prefect API)."""

    def __init__(self) -> None:
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.api_url: str | None = None  # once it answers and the run uses it
        self.shutdown_log = _prefect_home() / "temporary-server-shutdown.log"
        self._relaying = False
        self._relayer: threading.Thread | None = None
        if os.environ.get("PREFECT_API_URL"):
            return
        spec = importlib.util.find_spec("prefect")
        self.port = _free_port()
        if spec is None or not spec.submodule_search_locations or self.port is None:
            return
        app_dir = Path(next(iter(spec.submodule_search_locations))).parent
        # As Prefect starts it (SubprocessASGIServer._run_uvicorn_command); the child reads the
        # same settings sources (environment, profile, files) as this process.
        env = (
            {
                # Services that serve a lasting server: the event feed, automations and their
                # actions (a sixth of the server's CPU in an S x 500 run; flow runs, task runs,
                # logs and artifacts are recorded as before). The environment may turn them on.
                "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
                "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",  # and actions
            }
            | os.environ
            | {
                "PREFECT_UI_ENABLED": "0",
                "PREFECT__SERVER_EPHEMERAL": "1",
                "PREFECT__SERVER_FINAL": "1",
            }
        )
        command = [sys.executable, "-m", "uvicorn", "--app-dir", str(app_dir), "--factory"]
        command += ["prefect.server.api.server:create_app", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--log-level", "error", "--lifespan", "on"]
        # its output reaches the terminal while the run lasts; what it prints shutting down
        # after (a request the exiting run left half-done, cancelled in its database query)
        # goes to a file in PREFECT_HOME: no traceback follows a completed run
        self.process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
        self._relaying = True
        self._relayer = threading.Thread(target=self._relay, name="server-output", daemon=True)
        self._relayer.start()

    def _relay(self) -> None:
        """The child's stderr to ours while the run lasts, then to the shutdown log."""
        assert self.process is not None and self.process.stderr is not None
        log = None
        for line in iter(self.process.stderr.readline, b""):
            if self._relaying:
                with contextlib.suppress(OSError, ValueError):  # a terminal gone, closed
                    sys.stderr.write(line.decode(errors="replace"))
                    sys.stderr.flush()
                continue
            with contextlib.suppress(OSError):
                if log is None:
                    self.shutdown_log.parent.mkdir(parents=True, exist_ok=True)
                    log = self.shutdown_log.open("ab")
                log.write(line)
                log.flush()
        if log is not None:
            log.close()

    def run_ended(self) -> None:
        """What the child prints from now on goes to the shutdown log."""
        self._relaying = False

    def stop(self) -> None:
        self._relaying = False
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self._relayer is not None:  # what it printed last, written down
                self._relayer.join(timeout=STOP_S)
        self.process = None
        self.api_url = None

    def warm_up(self, request: Any) -> Callable[[bool], None]:
        """Until `ready(ok)`: SIGTERM stops the run and the server (flows/stopping.py).
        ready(True) waits until the server answers, for `serving` to name it (or stops it when
        the run does not need it); ready(False) stops it."""
        previous = _stop_on_sigterm(request.run_id)

        def ready(ok: bool) -> None:
            try:
                if ok and self.process is not None:
                    self._await_answer()
                else:
                    self.stop()
            finally:
                if previous is not None:
                    signal.signal(signal.SIGTERM, previous)

        return ready

    def _await_answer(self) -> None:
        from prefect.settings import (
            PREFECT_API_URL,
            PREFECT_SERVER_EPHEMERAL_ENABLED,
            PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        )

        assert self.process is not None and self.port is not None
        if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
            self.stop()  # a profile or settings file names a server: the run uses that one
            return
        deadline = time.monotonic() + PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()
        while not _healthy(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()  # Prefect starts its own when the flow begins
                return
            time.sleep(0.05)
        self.api_url = f"http://127.0.0.1:{self.port}/api"
        logging.getLogger("prefect").info(
            "Starting temporary server on http://127.0.0.1:%d (stopped when the run ends)",
            self.port,
        )

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Within: Prefect's client talks to this server, as under Prefect's own test harness
        (a settings context, which task threads inherit), so Prefect never imports its server
        module here (3 s of this process's start-up, one core busy)."""
        if self.api_url is None:
            yield
            return
        import prefect.settings as prefect_settings

        updates = {
            prefect_settings.PREFECT_API_URL: self.api_url,
            # no UI link: like Prefect's own temporary server, this one serves no UI
            prefect_settings.PREFECT_UI_URL: "",
            # no heartbeats: they let a lasting server mark a crashed flow run, and this one
            # ends with the process (stopping the heartbeat thread cost each run up to 1 s)
            prefect_settings.PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None,
        }
        try:
            with prefect_settings.temporary_settings(updates=updates):
                yield
        finally:
            self.run_ended()


def _prefect_home() -> Path:
    """Prefect's home folder, as its settings default it (before Prefect is imported)."""
    return Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()


def _stop_on_sigterm(run_id: str | None) -> Any:
    if threading.current_thread() is not threading.main_thread():
        return None
    from lme_bench_flows.stopping import stop_now

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop_now(signum, run_id)

    return signal.signal(signal.SIGTERM, on_sigterm)


def start() -> EarlyServer:
    server = EarlyServer()
    if server.process is not None:
        import atexit

        atexit.register(server.stop)  # after Prefect's own exit handlers (registered later)
    return server
