"""Loopback HTTP servers for the fake providers, speaking HTTP/1.1 like the real ones.

Connections are kept alive across requests (every body has a Content-Length, streams are sent
chunked); `keep_alive=False` falls back to HTTP/1.0, one connection per request. A handler can
wait, stream slowly, drop its connection or stall it: waits end and stalled or idle
connections are closed when the server stops, so a test never outlives its server.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from tests.providers.behaviour import Fault


class LoopbackServer(ThreadingHTTPServer):
    """A threaded server that knows its open connections, so stopping it closes them all."""

    daemon_threads = False  # server_close() joins every handler thread
    block_on_close = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.released = threading.Event()  # set when the server stops: waits and stalls end
        self.accepted = 0  # connections accepted in all
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._open.add(request)
            self.accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client hanging up is no error
            super().handle_error(request, client_address)

    def stop(self) -> None:
        self.shutdown()  # no new connections
        self.released.set()
        with self._lock:
            still_open = list(self._open)
        for connection in still_open:  # wakes handlers waiting for a next request
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self.server_close()


class Http11Handler(BaseHTTPRequestHandler):
    """Quiet; JSON and streamed bodies; the faults a real server has."""

    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    @property
    def peer(self) -> int:
        """The client's port: one per connection, so requests sharing it shared a connection."""
        return int(self.client_address[1])

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def lower_headers(self) -> dict[str, str]:
        return {key.lower(): value for key, value in self.headers.items()}

    def pause(self, seconds: float) -> bool:
        """Wait `seconds`; False (and the connection is to be closed) if the server stopped."""
        if seconds > 0 and self.server.released.wait(seconds):
            self.close_connection = True
            return False
        return not self.server.released.is_set()

    def start(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()

    def send_bytes(self, status: int, content_type: str, data: bytes, **headers: str) -> None:
        self.start(
            status, {"Content-Type": content_type, "Content-Length": str(len(data)), **headers}
        )
        self.wfile.write(data)

    def send_json(self, status: int, payload: Any, **headers: str) -> None:
        self.send_bytes(status, "application/json", json.dumps(payload).encode(), **headers)

    def send_cut(self, status: int, payload: Any, fault: Fault, **headers: str) -> None:
        """A JSON reply whose headers promise the whole body but only half of it is sent."""
        data = json.dumps(payload).encode()
        self.start(
            status,
            {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers},
        )
        self.wfile.write(data[: len(data) // 2])
        self.fail(fault)

    @property
    def chunked(self) -> bool:
        return self.request_version == "HTTP/1.1" and self.protocol_version == "HTTP/1.1"

    def start_stream(self, content_type: str, **headers: str) -> None:
        if self.chunked:
            headers["Transfer-Encoding"] = "chunked"
        else:
            self.close_connection = True  # the body ends when the connection does
        self.start(200, {"Content-Type": content_type, **headers})

    def send_piece(self, data: bytes) -> None:
        if self.chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        self.wfile.write(data)

    def end_stream(self) -> None:
        if self.chunked:
            self.wfile.write(b"0\r\n\r\n")

    def fail(self, fault: Fault) -> None:
        """Drop the connection now, or stall it: send nothing more until the server stops."""
        if fault == "stall":
            self.server.released.wait()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


H = TypeVar("H", bound=Http11Handler)


@contextmanager
def run_server(
    handler: type[H], keep_alive: bool = True, idle_timeout_s: float | None = None
) -> Iterator[LoopbackServer]:
    """Serve `handler` on a free loopback port until the block ends. With `idle_timeout_s`,
    a kept-alive connection idle that long is closed by the server, as real servers do
    (uvicorn after 5 s, by default)."""
    if not keep_alive:
        handler = type(handler.__name__, (handler,), {"protocol_version": "HTTP/1.0"})
    if idle_timeout_s is not None:
        handler = type(handler.__name__, (handler,), {"timeout": idle_timeout_s})
    server = LoopbackServer(handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
        thread.join()
