"""`lme-bench dataset download beam-100k` against a loopback server standing in for GitHub's
raw files (made-up chats, never BEAM's): each chat's files land in the layout a run reads,
verified against their pinned sha256, a dropped transfer resumes, bytes that do not match are
not kept; and the pins are the repository's files, when its mirror is on this machine."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lme_bench_flows.command import main

from lme_bench.benchmarks.registry import detect_benchmark
from lme_bench.dataset import download_beam
from lme_bench.dataset.beam_files import PINNED_FILES
from lme_bench.dataset.download import DownloadError
from tests.benchmarks.beam.samples import CHAT, QUESTIONS

MIRROR = Path("/work/.mirror/mohammadtavakoli78+BEAM/repo")
FILES = {
    f"chats/100K/{n}/{name}": json.dumps(data, indent=2).encode()
    for n in (1, 2)
    for name, data in (
        ("chat.json", CHAT),
        ("probing_questions/probing_questions.json", QUESTIONS),
    )
}
PREFIX = f"/{download_beam.REPO}/{download_beam.COMMIT}/"


class FakeRaw:
    def __init__(self, cut: str | None = None) -> None:
        self.cut = cut  # the first GET of this file drops after 100 bytes
        self.gets: list[tuple[str, str | None]] = []  # (path, Range header)


def _handler(raw: FakeRaw) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.removeprefix(PREFIX)
            if not self.path.startswith(PREFIX) or path not in FILES:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body, asked = FILES[path], self.headers.get("Range")
            raw.gets.append((path, asked))
            start = int(asked.split("=")[1].split("-")[0]) if asked else 0
            self.send_response(206 if asked else 200)
            self.send_header("Content-Length", str(len(body) - start))
            if asked:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.end_headers()
            if path == raw.cut and [p for p, _ in raw.gets].count(path) == 1:
                self.wfile.write(body[start:100])  # then drop the connection mid-body
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(body[start:])

    return Handler


@contextmanager
def fake_raw(
    raw: FakeRaw, monkeypatch: pytest.MonkeyPatch, pins: dict[str, tuple[str, int]]
) -> Iterator[FakeRaw]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(raw))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("BEAM_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(download_beam, "PINNED_FILES", pins)
    try:
        yield raw
    finally:
        server.shutdown()
        server.server_close()


def _pins() -> dict[str, tuple[str, int]]:
    return {path: (hashlib.sha256(body).hexdigest(), len(body)) for path, body in FILES.items()}


def test_the_chats_land_verified_in_the_layout_a_run_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = "chats/100K/1/chat.json"
    with fake_raw(FakeRaw(cut=cut), monkeypatch, _pins()) as raw:
        assert main(["dataset", "download", "beam-100k", "--to", str(tmp_path)]) == 0
    for path, body in FILES.items():
        assert (tmp_path / path).read_bytes() == body
    assert [asked for path, asked in raw.gets if path == cut] == [None, "bytes=100-"]
    assert not list(tmp_path.rglob("*.part"))
    out = capsys.readouterr().out
    assert f"{tmp_path / 'chats' / '100K'}: 4 files, each verified" in out
    assert detect_benchmark(tmp_path / "chats" / "100K").name == "beam"
    with fake_raw(FakeRaw(), monkeypatch, _pins()) as again:
        download_beam.download_beam("beam-100k", tmp_path)
    assert again.gets == []  # verified files are not fetched again


def test_bytes_that_do_not_match_their_pin_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = _pins()
    wrong = "chats/100K/1/probing_questions/probing_questions.json"
    pins[wrong] = ("0" * 64, pins[wrong][1])
    with (
        fake_raw(FakeRaw(), monkeypatch, pins),
        pytest.raises(DownloadError, match="differs from the lme-bench sha256 0000") as caught,
    ):
        download_beam.download_beam("beam-100k", tmp_path)
    assert not (tmp_path / wrong).exists()
    assert (tmp_path / f"{wrong}.bad").read_bytes() == FILES[wrong]
    assert "probing_questions.json.bad" in str(caught.value)


def test_an_unreachable_server_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again before the download tries it
    monkeypatch.setenv("BEAM_BASE_URL", f"http://127.0.0.1:{port}")
    assert main(["dataset", "download", "beam-100k", "--to", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "cannot fetch chats/100K/1/chat.json from http://127.0.0.1:" in err
    assert err.count("\n") == 1  # one line, no traceback
    assert not list(tmp_path.rglob("chat.json"))


def test_the_tiers_offered_hold_every_chat_of_the_tier() -> None:
    hundred_k = download_beam.tier_files("beam-100k")
    assert len(hundred_k) == 50 and hundred_k[0] == "chats/100K/1/chat.json"
    assert len(download_beam.tier_files("beam-500k")) == 70


def test_the_truncated_histories_are_fetched_where_the_repository_has_them() -> None:
    """The chats whose `chat_trunecated.json` BEAM's generation read (the commit's tree)."""
    truncated = [
        int(path.split("/")[2])
        for path in download_beam.tier_files("beam-100k")
        if path.endswith("/chat_trunecated.json")
    ]
    assert truncated == [5, 7, 10, 11, 12, 16, 17, 18, 19, 20]
    assert not [p for p in download_beam.tier_files("beam-500k") if "trunecated" in p]


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no git mirror of mohammadtavakoli78/BEAM here")
def test_the_pins_are_the_repositorys_files() -> None:
    files = download_beam.tier_files("beam-100k")
    for path in files[:6] + [p for p in files if p.endswith("/chat_trunecated.json")]:
        blob = subprocess.run(
            ["git", "-C", str(MIRROR), "cat-file", "-p", f"{download_beam.COMMIT}:{path}"],
            check=True,
            capture_output=True,
        ).stdout
        assert (hashlib.sha256(blob).hexdigest(), len(blob)) == PINNED_FILES[path]
