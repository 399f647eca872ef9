"""A loopback webhook receiver for notification tests: a real HTTP/1.1 server that records the
JSON body, path and headers of every POST and answers 200, as a chat service's webhook does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.providers.http11 import Http11Handler, run_server


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class Receiver:
    def __init__(self) -> None:
        self.url = ""
        self._received: list[Received] = []
        self._lock = threading.Lock()

    def add(self, message: Received) -> None:
        with self._lock:
            self._received.append(message)

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self._received)

    def wait_for(self, wanted: Callable[[Received], bool], timeout: float) -> Received:
        """The first message `wanted` accepts, polling until `timeout` seconds have passed."""
        deadline = time.monotonic() + timeout
        while True:
            found = [m for m in self.received if wanted(m)]
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no wanted message within {timeout:.0f} s; received: {self.received}"
                )
            time.sleep(0.2)


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    class Handler(Http11Handler):
        def do_POST(self) -> None:
            raw = self.read_body()
            try:
                body = json.loads(raw)
            except ValueError:
                self.send_json(400, {"error": "the body is not JSON"})
                return
            receiver.add(Received(self.path, self.lower_headers(), body))
            self.send_json(200, {"ok": True})

    with run_server(Handler) as server:
        receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/lme-bench"
        yield receiver
