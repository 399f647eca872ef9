"""`make serve` (deployments/serve.sh): besides the Prefect server and worker it serves the
results folder on loopback, gives the worker that URL as `[run] link_base`, and SIGTERM stops
all three children."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.integration.prefect_server import BIN, ROOT, clean_environ, free_port

pytestmark = pytest.mark.integration

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0  # the worker may need its 20 s before SIGKILL


def _children(pid: int) -> dict[int, tuple[str, dict[str, str]]]:
    """Child process id -> (its command line, its environment), from Linux's /proc."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                raw = (stat.parent / "environ").read_bytes().split(b"\0")
                pairs = (item.decode(errors="replace").partition("=") for item in raw if item)
                found[int(stat.parent.name)] = (command, {k: v for k, _, v in pairs})
        except (OSError, IndexError, ValueError):
            continue
    return found


def _worker(children: dict[int, tuple[str, dict[str, str]]]) -> dict[str, str]:
    """The Prefect worker's environment; empty while it has not started."""
    return next((env for command, env in children.values() if " worker start" in command), {})


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_serve_starts_a_file_server_for_the_worker_and_stops_it(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "run-1").mkdir(parents=True)
    (results / "run-1" / "report.html").write_text("<p>the report</p>", encoding="utf-8")
    files_port = free_port()
    env = clean_environ() | {
        "BIN": str(BIN),
        "PREFECT_PORT": str(free_port()),
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "FILES_PORT": str(files_port),
        "LME_RUN__RESULTS_DIR": str(results),
    }
    log = (tmp_path / "serve.log").open("w")
    script = subprocess.Popen(
        [str(ROOT / "deployments" / "serve.sh")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{files_port}/"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "Result files:" not in (tmp_path / "serve.log").read_text():
            assert script.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "serve.sh did not start its servers"
            time.sleep(0.5)
        with urllib.request.urlopen(base + "run-1/report.html", timeout=10) as response:
            assert response.read() == b"<p>the report</p>"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _worker(children := _children(script.pid)):
            assert time.monotonic() < deadline, "serve.sh started no worker"
            time.sleep(0.5)
        commands = sorted(c for c, _ in children.values())
        assert len(children) == 3, commands  # the file server, the Prefect server, the worker
        assert _worker(children)["LME_RUN__LINK_BASE"] == base
        script.send_signal(signal.SIGTERM)
        assert script.wait(timeout=STOP_TIMEOUT_S) == 0
        assert not _answers(base + "run-1/report.html")
        for pid in children:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
        log.close()
