"""A real Prefect server, a process worker on the `lme-bench` pool, and the project's
deployments from deployments/prefect.yaml, each started as a subprocess for integration tests.

Everything runs on loopback under a temporary PREFECT_HOME. `prefect_stack` stops the worker
with SIGINT (it ignores SIGTERM), then the server, each with a timeout and SIGKILL as the last
resort, and signals whole process groups, so flow-run subprocesses go too.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project: deployments run from here
BIN = Path(sys.executable).parent
POOL = "lme-bench"
HEALTH_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def clean_environ() -> dict[str, str]:
    """This process's environment without Prefect or lme-bench settings of its own."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "LME_"))}


@dataclass
class PrefectStack:
    port: int
    home: Path
    env: dict[str, str]  # what CLI calls see
    logs: Path

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def prefect(self, *args: str, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
        """Run the `prefect` CLI as a user would, from the project root."""
        return subprocess.run(
            [str(BIN / "prefect"), *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def log_tail(self, name: str, lines: int = 60) -> str:
        path = self.logs / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _spawn(args: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            args,
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: children are stopped with it
        )


def stop(process: subprocess.Popen[bytes], first: signal.Signals = signal.SIGINT) -> None:
    """Signal the process group and wait; then SIGKILL whatever is left of the group."""
    try:
        if process.poll() is None:
            os.killpg(process.pid, first)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_TIMEOUT_S)
    except ProcessLookupError:
        pass
    finally:
        # the leader if it is still there, and any child left in its group (a flow run)
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT_S)


def wait_healthy(url: str, server: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Prefect server exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"the Prefect server at {url} was not healthy within {timeout:.0f} s")


def _checked(result: subprocess.CompletedProcess[str], what: str) -> None:
    if result.returncode != 0:
        output = f"{result.stdout}\n{result.stderr}"
        raise RuntimeError(f"{what} failed ({result.returncode}):\n{output}")


@contextmanager
def prefect_stack(home: Path, worker_env: Mapping[str, str]) -> Iterator[PrefectStack]:
    """Server, work pool, worker and deployments; `worker_env` is added to what the worker
    (and so every flow run) sees."""
    port = free_port()
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = clean_environ() | {
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "2",  # the worker polls every 10 s by default
        "LME_BENCH_ROOT": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    stack = PrefectStack(port=port, home=home, env=env, logs=logs)
    server_args = ["server", "start", "--host", "127.0.0.1", "--port", str(port)]
    with ExitStack() as cleanup:
        server = _spawn([str(BIN / "prefect"), *server_args], env, logs / "server.log")
        cleanup.callback(stop, server)
        try:
            wait_healthy(stack.api_url, server, HEALTH_TIMEOUT_S)
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"{exc}\n{stack.log_tail('server')}") from None
        pool = stack.prefect("work-pool", "create", POOL, "--type", "process", "--overwrite")
        _checked(pool, "prefect work-pool create")
        worker_args = ["worker", "start", "--pool", POOL, "--name", f"it-worker-{port}"]
        worker_log = logs / "worker.log"
        worker = _spawn([str(BIN / "prefect"), *worker_args], env | dict(worker_env), worker_log)
        cleanup.callback(stop, worker)  # callbacks run last-in first-out: the worker first
        deploy = stack.prefect(
            "--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"
        )
        _checked(deploy, "prefect deploy --all")
        yield stack
