"""`lme-bench dataset download` against a loopback server standing in for the Hugging Face hub:
the file lands verified, an interrupted transfer resumes with a Range request, a file that does
not match its sha256 is moved aside, and an unreachable hub is one clear error."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import constants as hub_constants
from lme_bench_flows.command import main

from lme_bench.dataset.download import REPO_ID, DownloadError, download

ORACLE = json.dumps([{"question_id": "q1", "note": "x" * 5000}]).encode()


class FakeHub:
    def __init__(self, body: bytes, sha256: str, cut_first_get_at: int | None = None) -> None:
        self.body, self.sha256, self.cut = body, sha256, cut_first_get_at
        self.gets: list[str | None] = []  # the Range header of each GET


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    path = f"/datasets/{REPO_ID}/resolve/main/longmemeval_oracle.json"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _head(self, status: int, length: int, extra: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(length))
            self.send_header("X-Repo-Commit", "a" * 40)
            self.send_header("ETag", f'"{hub.sha256}"')
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()

        def do_HEAD(self) -> None:
            if self.path != path:
                self._head(404, 0, {})
                return
            self._head(200, len(hub.body), {})

        def do_GET(self) -> None:
            if self.path != path:  # the hub library asks other things of the hub too
                self._head(404, 0, {})
                return
            asked = self.headers.get("Range")
            hub.gets.append(asked)
            start = int(asked.split("=")[1].split("-")[0]) if asked else 0
            part = hub.body[start:]
            extra = {"Content-Range": f"bytes {start}-{len(hub.body) - 1}/{len(hub.body)}"}
            self._head(206 if asked else 200, len(part), extra if asked else {})
            if hub.cut is not None and len(hub.gets) == 1:
                self.wfile.write(part[: hub.cut])  # then drop the connection mid-body
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(part)

    return Handler


@contextmanager
def fake_hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    # huggingface_hub reads HF_HUB_OFFLINE once, on import: a test that loaded a model earlier in
    # this process (offline, as every model load is) left it set. `lme-bench dataset download`
    # runs in a process of its own, where it is read from the environment above.
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


def test_download_verifies_against_the_hubs_sha256_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sha = hashlib.sha256(ORACLE).hexdigest()
    with fake_hub(FakeHub(ORACLE, sha, cut_first_get_at=1000), monkeypatch) as hub:
        assert main(["dataset", "download", "oracle", "--to", str(tmp_path)]) == 0
    target = tmp_path / "longmemeval_oracle.json"
    assert target.read_bytes() == ORACLE
    assert hub.gets == [None, "bytes=1000-"]  # resumed where it broke off
    assert not (tmp_path / "longmemeval_oracle.json.part").exists()
    out = capsys.readouterr().out
    assert f"sha256 {sha}, verified against the hub's published sha256" in out


def test_a_partial_file_left_by_an_earlier_run_is_continued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "longmemeval_oracle.json.part").write_bytes(ORACLE[:3000])
    sha = hashlib.sha256(ORACLE).hexdigest()
    with fake_hub(FakeHub(ORACLE, sha), monkeypatch) as hub:
        done = download("oracle", tmp_path)
    assert hub.gets == ["bytes=3000-"]
    assert done.path.read_bytes() == ORACLE and done.verified_against == "hub"


def test_a_file_that_does_not_match_is_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        fake_hub(FakeHub(ORACLE, "0" * 64), monkeypatch),
        pytest.raises(DownloadError, match="differs from the hub sha256 0000") as caught,
    ):
        download("oracle", tmp_path)
    assert not (tmp_path / "longmemeval_oracle.json").exists()
    assert (tmp_path / "longmemeval_oracle.json.bad").read_bytes() == ORACLE
    assert "longmemeval_oracle.json.bad" in str(caught.value)


def test_an_unreachable_hub_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again before the download tries it
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert main(["dataset", "download", "s", "--to", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert (
        f"cannot fetch longmemeval_s_cleaned.json from the Hugging Face hub at http://127.0.0.1:{port}"
        in err
    )
    assert "download it by hand from https://huggingface.co/datasets/" in err
    assert err.count("\n") == 1  # one line, no traceback
    assert not list(tmp_path.glob("*.json"))
