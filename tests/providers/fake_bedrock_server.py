"""A loopback stand-in for Bedrock's runtime endpoint (`POST /model/<id>/converse`), for tests:
real HTTP through botocore, scripted outcomes, every request counted.

Outcomes, one per request (the last repeats): "ok" answers, "throttled" is HTTP 429
ThrottlingException, "unavailable" is HTTP 503 ServiceUnavailableException, and "slow" answers
only once the test ends (or after `slow_s`), so a client timeout is the only way out.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.providers.json_http import JsonHandler

_ERRORS = {
    "throttled": (429, "ThrottlingException", "Too many requests, please wait."),
    "unavailable": (503, "ServiceUnavailableException", "Service unavailable."),
}


class FakeBedrock:
    def __init__(self, outcomes: list[str], slow_s: float = 30.0) -> None:
        self.outcomes = list(outcomes)
        self.slow_s = slow_s
        self.paths: list[str] = []
        self.released = threading.Event()  # set when the test ends: slow replies stop waiting
        self._lock = threading.Lock()

    def next_outcome(self, path: str) -> str:
        with self._lock:
            self.paths.append(path)
            return self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.paths)


def _reply(text: str) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
        "metrics": {"latencyMs": 5},
    }


def _handler(fake: FakeBedrock) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            outcome = fake.next_outcome(self.path)
            if outcome in _ERRORS:
                status, code, message = _ERRORS[outcome]
                self._json(status, {"message": message}, {"x-amzn-ErrorType": code})
                return
            if outcome == "slow":
                fake.released.wait(fake.slow_s)
            with contextlib.suppress(OSError):  # the client may have given up waiting
                self._json(200, _reply("Austin."), {})

    return Handler


@contextmanager
def serve_bedrock(outcomes: list[str], slow_s: float = 30.0) -> Iterator[tuple[str, FakeBedrock]]:
    """Run the fake on a free loopback port; yields (endpoint URL, the fake)."""
    fake = FakeBedrock(outcomes, slow_s)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
    finally:
        fake.released.set()
        server.shutdown()
        server.server_close()
