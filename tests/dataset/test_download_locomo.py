"""`lme-bench dataset download locomo` against a loopback server standing in for GitHub's raw
files: the zip lands verified against the pinned sha256 and reads as LoCoMo, a dropped
transfer resumes, other bytes are moved aside, an unreachable server is one clear error; and
the pin is the sha256 of the file in the repository, when its mirror is on this machine."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lme_bench_flows.command import main

from lme_bench.benchmarks.registry import detect_benchmark
from lme_bench.dataset import download_locomo
from lme_bench.dataset.download import DownloadError
from tests.benchmarks.locomo.samples import conversation_file

MIRROR = Path("/work/.mirror/snap-research+locomo/repo")


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data/locomo10_v2/26.json", json.dumps(conversation_file()) + " " * 4000)
    return buffer.getvalue()


BODY = _zip()
PATH = f"/{download_locomo.REPO}/{download_locomo.COMMIT}/{download_locomo.FILE}"


class FakeRaw:
    def __init__(self, cut_first_get_at: int | None = None) -> None:
        self.cut = cut_first_get_at
        self.gets: list[str | None] = []  # the Range header of each GET


def _handler(raw: FakeRaw) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path != PATH:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            asked = self.headers.get("Range")
            raw.gets.append(asked)
            start = int(asked.split("=")[1].split("-")[0]) if asked else 0
            part = BODY[start:]
            self.send_response(206 if asked else 200)
            self.send_header("Content-Length", str(len(part)))
            if asked:
                self.send_header("Content-Range", f"bytes {start}-{len(BODY) - 1}/{len(BODY)}")
            self.end_headers()
            if raw.cut is not None and len(raw.gets) == 1:
                self.wfile.write(part[: raw.cut])  # then drop the connection mid-body
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(part)

    return Handler


@contextmanager
def fake_raw(raw: FakeRaw, monkeypatch: pytest.MonkeyPatch, sha256: str) -> Iterator[FakeRaw]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(raw))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("LOCOMO_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(download_locomo, "SHA256", sha256)
    monkeypatch.setattr(download_locomo, "SIZE", len(BODY))
    try:
        yield raw
    finally:
        server.shutdown()
        server.server_close()


def test_the_zip_lands_verified_after_a_resumed_transfer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sha = hashlib.sha256(BODY).hexdigest()
    with fake_raw(FakeRaw(cut_first_get_at=500), monkeypatch, sha) as raw:
        assert main(["dataset", "download", "locomo", "--to", str(tmp_path)]) == 0
    target = tmp_path / "locomo10.zip"
    assert target.read_bytes() == BODY
    assert raw.gets == [None, "bytes=500-"]
    assert not (tmp_path / "locomo10.zip.part").exists()
    assert f"sha256 {sha}, verified against the sha256 lme-bench knows" in capsys.readouterr().out
    assert detect_benchmark(target).name == "locomo"
    with fake_raw(FakeRaw(), monkeypatch, sha) as again:
        download_locomo.download_locomo(tmp_path)
    assert again.gets == []  # a verified file of the pinned size is not fetched again


def test_bytes_that_do_not_match_the_pin_are_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        fake_raw(FakeRaw(), monkeypatch, "0" * 64),
        pytest.raises(DownloadError, match="differs from the lme-bench sha256 0000") as caught,
    ):
        download_locomo.download_locomo(tmp_path)
    assert not (tmp_path / "locomo10.zip").exists()
    assert (tmp_path / "locomo10.zip.bad").read_bytes() == BODY
    assert "locomo10.zip.bad" in str(caught.value)


def test_an_unreachable_server_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again before the download tries it
    monkeypatch.setenv("LOCOMO_BASE_URL", f"http://127.0.0.1:{port}")
    assert main(["dataset", "download", "locomo", "--to", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"cannot fetch locomo10.zip from http://127.0.0.1:{port}/snap-research/locomo/" in err
    assert "download it by hand from https://github.com/snap-research/locomo/blob/" in err
    assert err.count("\n") == 1  # one line, no traceback
    assert not list(tmp_path.glob("*.zip"))


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no git mirror of snap-research/locomo here")
def test_the_pin_is_the_repositorys_file() -> None:
    blob = subprocess.run(
        [
            "git",
            "-C",
            str(MIRROR),
            "cat-file",
            "-p",
            f"{download_locomo.COMMIT}:{download_locomo.FILE}",
        ],
        check=True,
        capture_output=True,
    ).stdout
    assert len(blob) == download_locomo.SIZE
    assert hashlib.sha256(blob).hexdigest() == download_locomo.SHA256
