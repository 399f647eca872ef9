"""`make serve` (deployments/serve.sh): besides the Prefect server and worker it serves the
results folder on loopback and gives the worker that URL as `[run] link_base`; SIGTERM or SIGINT
to it, to make or to make's process group (Ctrl-C in its terminal) stops all three within 10 s
and frees their ports; a worker that dies is started again while the server stays up."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.integration.prefect_server import BIN, ROOT, clean_environ, free_port
from tests.integration.serve_processes import (
    START_TIMEOUT_S,
    answers,
    command,
    kill_session,
    make_serve,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)"),
]

STOP_TIMEOUT_S = 10.0  # what the docs promise


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
        assert not answers(base + "run-1/report.html")
        for pid in children:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        kill_session(script)
        log.close()


def test_a_killed_worker_is_started_again_and_sigterm_to_the_process_group_stops_all(
    tmp_path: Path,
) -> None:
    with make_serve(tmp_path) as served:
        served.wait_started()
        (first,) = served.workers()
        os.kill(first, signal.SIGKILL)
        served.wait_for("with a new worker", lambda: bool(served.workers() - {first}), 120.0)
        assert "the worker was killed by SIGKILL" in served.output()
        assert answers(served.health_url)
        served.processes()
        os.killpg(served.make.pid, signal.SIGTERM)  # what `kill -TERM -<pgid>` or a supervisor does
        left, ports = served.left_after(STOP_TIMEOUT_S)
        assert not left, {pid: command(pid) for pid in left}
        assert not ports, served.output()[-3000:]


@pytest.mark.parametrize("how", ["SIGINT to make", "SIGTERM to make", "Ctrl-C in its terminal"])
def test_make_serve_stops_the_servers_and_the_worker_and_frees_the_ports(
    tmp_path: Path, how: str
) -> None:
    with make_serve(tmp_path, terminal=how.startswith("Ctrl-C")) as served:
        served.wait_started()
        served.processes()
        if how == "SIGINT to make":  # make passes SIGINT on to no recipe: it waits for it
            os.kill(served.make.pid, signal.SIGINT)
        elif how == "SIGTERM to make":
            os.kill(served.make.pid, signal.SIGTERM)
        else:
            assert served.terminal is not None
            os.write(served.terminal, b"\x03")
        left, ports = served.left_after(STOP_TIMEOUT_S)
        assert not left, {pid: command(pid) for pid in left}
        assert not ports, served.output()[-3000:]


def test_the_prefect_server_exiting_stops_the_rest_and_make_serve_fails(tmp_path: Path) -> None:
    with make_serve(tmp_path) as served:
        served.wait_started()
        (server,) = (pid for pid in served.processes() if " server start " in command(pid))
        os.kill(server, signal.SIGKILL)
        left, ports = served.left_after(STOP_TIMEOUT_S)
        assert not left, {pid: command(pid) for pid in left}
        assert not ports, served.output()[-3000:]
        assert served.make.returncode != 0
        assert "the Prefect server was killed by SIGKILL" in served.output()


def test_a_port_in_use_is_named_before_anything_starts(tmp_path: Path) -> None:
    files_port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = clean_environ() | {
            "BIN": str(BIN),
            "PREFECT_PORT": str(port),
            "FILES_PORT": str(files_port),
            "PREFECT_HOME": str(tmp_path / "prefect-home"),
            "LME_RUN__RESULTS_DIR": str(tmp_path / "results"),
        }
        script = subprocess.Popen(
            [str(ROOT / "deployments" / "serve.sh")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _, err = script.communicate(timeout=60)
        finally:
            kill_session(script)
    assert script.returncode == 1
    assert f"port {port} is in use" in err.decode() and "set PREFECT_PORT" in err.decode()
    assert not (tmp_path / "prefect-home").exists()  # no server was started
