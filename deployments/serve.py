"""`make serve`: a Prefect server, a process worker on the `lme-bench` pool and a static file
server of the results folder, all on loopback, kept up until stopped.

Each child runs in a process group of its own, so signals meant for `make serve` (Ctrl-C,
SIGTERM or SIGHUP to make, to its process group or to this process) reach this supervisor, which
stops the three in order: the worker first, with SIGINT (a Prefect worker does not stop on
SIGTERM) while the server still answers it, then the servers; any group still there at
STOP_BUDGET_S is SIGKILLed. A worker or file server that exits is started again, after a pause
that grows while it keeps dying young; the Prefect server exiting stops the rest.

make does not pass SIGINT on to its recipe: it waits for the recipe to end, and only stops
catching the signal. Started by make (SERVE_MAKE_PID), the supervisor watches for that, and for
make going away, and stops as if it had been signalled itself.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
import urllib.request
from pathlib import Path

from children import Child, MakeWatch

ROOT = Path(__file__).resolve().parents[1]
POOL = "lme-bench"
START_TIMEOUT_S = 180.0  # the server answers after ~6 s on an idle machine, ~40 s on a busy one
WORKER_GRACE_S = 4.0  # the worker's share of the stop budget, before the servers are signalled
STOP_BUDGET_S = 7.0
TICK_S = 0.25
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def say(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


class Stop(Exception):
    """Raised out of the supervisor's waits once a stop is asked for (signal, make, a child)."""

    def __init__(self, reason: str, code: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class Supervisor:
    def __init__(self, env: dict[str, str], make: MakeWatch | None) -> None:
        self.env = env
        self.make = make
        self.asked: str | None = None  # the stop signal's name, set by the handler
        self.children: list[Child] = []

    def on_signal(self, signum: int, _frame: object) -> None:
        if self.asked is None:
            self.asked = signal.Signals(signum).name

    def check(self) -> None:
        """Raise Stop if anything asks for one; called on every tick of every wait."""
        if self.asked is not None:
            raise Stop(f"{self.asked} received")
        if self.make is not None and (reason := self.make.stopped()) is not None:
            raise Stop(reason)

    def pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while True:
            self.check()
            if time.monotonic() >= end:
                return
            time.sleep(min(TICK_S, max(0.0, end - time.monotonic())))

    def start(self, name: str, args: list[str], quiet: str = "") -> Child:
        child = Child(name, args, self.env, cwd=ROOT, quiet=quiet)
        child.start()
        self.children.append(child)
        return child

    def run_once(self, name: str, args: list[str], timeout: float) -> None:
        """A short CLI call, in its own group too, that a stop interrupts (errors shown)."""
        call = self.start(name, args, quiet="stdout")
        deadline = time.monotonic() + timeout
        while call.exit_code() is None:
            if time.monotonic() > deadline:
                raise Stop(f"{name} did not finish within {timeout:.0f} s", 1)
            self.pause(TICK_S)
        self.children.remove(call)
        if call.exit_code() != 0:
            raise Stop(f"{name} failed ({call.describe_exit()})", 1)

    def wait_healthy(self, server: Child, url: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not answers(url):
            if server.exit_code() is not None:
                raise Stop(f"the Prefect server {server.describe_exit()} before it answered", 1)
            if time.monotonic() > deadline:
                raise Stop(f"the Prefect server did not answer within {START_TIMEOUT_S:.0f} s", 1)
            self.pause(0.5)

    def keep_up(self, server: Child, restartable: list[Child]) -> None:
        """Until a stop: restart a child of `restartable` that exits; stop if the server does."""
        due: dict[str, float] = {}
        while True:
            self.pause(TICK_S)
            if server.exit_code() is not None:
                raise Stop(f"the Prefect server {server.describe_exit()}", 1)
            for child in restartable:
                if child.exit_code() is None:
                    continue
                if child.name not in due:
                    delay = child.next_restart_delay()
                    say(f"the {child.name} {child.describe_exit()}; starting it again in {delay} s")
                    due[child.name] = time.monotonic() + delay
                elif time.monotonic() >= due[child.name]:
                    del due[child.name]
                    child.start()
                    say(f"the {child.name} started again (pid {child.pid})")

    def stop_all(self, worker: Child | None) -> None:
        """SIGINT the worker, then the rest, within STOP_BUDGET_S; SIGKILL what is left."""
        end = time.monotonic() + STOP_BUDGET_S
        if worker is not None:
            worker.signal(signal.SIGINT)
            worker.wait_until(time.monotonic() + WORKER_GRACE_S)
        for child in self.children:
            if child is not worker:  # a second SIGINT would cut the worker's own stop short
                child.signal(signal.SIGINT)
        for child in self.children:
            child.wait_until(end)
        for child in self.children:  # the leader if it is still there, and anything in its group
            if child.exit_code() is None:
                say(f"the {child.name} was still stopping after {STOP_BUDGET_S:.0f} s: SIGKILL")
            child.signal(signal.SIGKILL)
            child.wait_until(time.monotonic() + 2.0)
        say(f"stopped in {time.monotonic() - end + STOP_BUDGET_S:.1f} s")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def taken(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def main() -> int:
    bin_dir = os.environ.get("BIN", ".venv/bin")
    port = int(os.environ.get("PREFECT_PORT", "4200"))
    files_port = int(os.environ.get("FILES_PORT", "4201"))
    results = ROOT / os.environ.get("LME_RUN__RESULTS_DIR", "results")
    api_url = f"http://127.0.0.1:{port}/api"
    link_base = f"http://127.0.0.1:{files_port}/"
    for what, number in (("PREFECT_PORT", port), ("FILES_PORT", files_port)):
        if taken(number):
            say(f"port {number} is in use (another `make serve`?); set {what} to another port")
            return 1
    env = os.environ | {
        "PREFECT_HOME": os.environ.get("PREFECT_HOME", str(ROOT / ".prefect")),
        "PREFECT_API_URL": api_url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "LME_BENCH_ROOT": str(ROOT),
        "LME_RUN__LINK_BASE": link_base,
    }
    make_pid = os.environ.get("SERVE_MAKE_PID")
    supervisor = Supervisor(env, MakeWatch.of(int(make_pid)) if make_pid else None)
    for signum in STOP_SIGNALS:
        signal.signal(signum, supervisor.on_signal)
    python, prefect = f"{bin_dir}/python", f"{bin_dir}/prefect"
    worker: Child | None = None
    code = 0
    try:
        results.mkdir(parents=True, exist_ok=True)
        files_args = ["--bind", "127.0.0.1", "--directory", str(results), str(files_port)]
        files_cmd = [python, "-m", "http.server", *files_args]
        files = supervisor.start("file server", files_cmd, quiet="stdout stderr")  # logs requests
        server_args = ["server", "start", "--host", "127.0.0.1", "--port", str(port)]
        server = supervisor.start("Prefect server", [prefect, *server_args])
        supervisor.wait_healthy(server, f"{api_url}/health")
        pool_args = ["work-pool", "create", POOL, "--type", "process", "--overwrite"]
        supervisor.run_once("prefect work-pool create", [prefect, *pool_args], 120.0)
        print(f"Prefect UI: http://127.0.0.1:{port}  (export PREFECT_API_URL={api_url})")
        print(f"Result files: {link_base}  ({results})", flush=True)
        name = f"worker-{socket.gethostname()}-{os.getpid()}"
        worker_args = ["worker", "start", "--pool", POOL, "--name", name]
        worker = supervisor.start("worker", [prefect, *worker_args])
        supervisor.keep_up(server, [worker, files])
    except Stop as stop:
        say(f"{stop.reason}; stopping")
        code = stop.code
    finally:  # on any error too: nothing is left running
        supervisor.stop_all(worker)
    return code


if __name__ == "__main__":
    sys.exit(main())
