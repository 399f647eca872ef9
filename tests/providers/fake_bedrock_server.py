"""A loopback stand-in for Bedrock's runtime endpoint, for tests: real HTTP/1.1 through botocore,
scripted outcomes, every request recorded.

`POST /model/<id>/converse` answers JSON; `POST /model/<id>/converse-stream` answers the AWS
event-stream framing (tests/providers/aws_eventstream.py), sent chunked. Outcomes, one per
request (the last repeats): "ok" answers, "throttled" is HTTP 429 ThrottlingException,
"unavailable" is HTTP 503 ServiceUnavailableException, "slow" answers only once the test ends
(or after `slow_s`), so a client timeout is the only way out; or a `Behaviour`
(tests/providers/behaviour.py): latency, a long reply generated at a given speed, a dropped or
stalled connection, an error status (in a stream after some tokens: an exception event). The
request's `inferenceConfig.maxTokens` cuts the reply (stopReason "max_tokens"); usage counts
the tokens generated (input tokens: a fixed 12).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.providers import aws_eventstream
from tests.providers.behaviour import Behaviour, Generation, generate
from tests.providers.http11 import Http11Handler, LoopbackServer, run_server

INPUT_TOKENS = 12

_ERRORS = {  # status: (x-amzn-ErrorType, message)
    429: ("ThrottlingException", "Too many requests, please wait."),
    500: ("InternalServerException", "The system encountered an unexpected error."),
    503: ("ServiceUnavailableException", "Service unavailable."),
}
_STREAM_ERRORS = {429: "throttlingException", 503: "serviceUnavailableException"}
_BAD_GATEWAY = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
Outcome = str | Behaviour


class FakeBedrock:
    def __init__(
        self, outcomes: list[Outcome], slow_s: float = 30.0, text: str = "Austin."
    ) -> None:
        named = {
            "ok": Behaviour(),
            "throttled": Behaviour(status=429),
            "unavailable": Behaviour(status=503),
            "slow": Behaviour(latency_s=slow_s),
        }
        self.outcomes = [named[o] if isinstance(o, str) else o for o in outcomes]
        self.slow_s = slow_s
        self.text = text
        self.paths: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.peers: list[int] = []  # the client port of each request's connection
        self.released = threading.Event()  # set when the test ends: waits and stalls end
        self.server: LoopbackServer | None = None
        self._lock = threading.Lock()

    def next_outcome(
        self, path: str, body: dict[str, Any], headers: dict[str, str], peer: int
    ) -> Behaviour:
        with self._lock:
            self.paths.append(path)
            self.bodies.append(body)
            self.headers.append(headers)
            self.peers.append(peer)
            return self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.paths)

    @property
    def connections(self) -> int:
        """Connections the server accepted."""
        return self.server.accepted if self.server else 0


def cap_of(body: dict[str, Any]) -> int | None:
    cap = (body.get("inferenceConfig") or {}).get("maxTokens")
    return int(cap) if cap is not None else None


def _usage(generation: Generation) -> dict[str, int]:
    n = len(generation.tokens)
    return {"inputTokens": INPUT_TOKENS, "outputTokens": n, "totalTokens": INPUT_TOKENS + n}


def _stop_reason(generation: Generation) -> str:
    return "max_tokens" if generation.capped else "end_turn"


def converse_reply(generation: Generation, latency_ms: int) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": generation.text}]}},
        "stopReason": _stop_reason(generation),
        "usage": _usage(generation),
        "metrics": {"latencyMs": latency_ms},
    }


def _handler(fake: FakeBedrock) -> type[Http11Handler]:
    class Handler(Http11Handler):
        def do_POST(self) -> None:
            started = time.monotonic()
            raw = self.read_body()
            body = json.loads(raw) if raw else {}
            behaviour = fake.next_outcome(self.path, body, self.lower_headers(), self.peer)
            if not self.pause(behaviour.latency_s):
                return
            streamed = self.path.endswith("/converse-stream")
            if behaviour.fault and not behaviour.after_tokens:
                self.fail(behaviour.fault)
            elif behaviour.status and not (streamed and behaviour.after_tokens):
                self.send_error_reply(behaviour.status)
            else:
                generation = generate(fake.text, behaviour, cap_of(body))
                if streamed:
                    self.stream(generation, behaviour, started)
                else:
                    self.answer(generation, behaviour, started)

        def send_error_reply(self, status: int) -> None:
            if status not in _ERRORS:  # a gateway's page, with no AWS error type
                self.send_bytes(status, "text/html", _BAD_GATEWAY)
                return
            code, message = _ERRORS[status]
            self.send_json(
                status,
                {"message": message},
                **{
                    "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"
                },
            )

        def answer(self, generation: Generation, behaviour: Behaviour, started: float) -> None:
            if not self.pause(len(generation.tokens) * behaviour.seconds_per_token):
                return
            latency_ms = int((time.monotonic() - started) * 1000)
            reply = converse_reply(generation, latency_ms)
            if behaviour.fault:
                self.send_cut(200, reply, behaviour.fault)
            else:
                self.send_json(200, reply)

        def stream(self, generation: Generation, behaviour: Behaviour, started: float) -> None:
            self.start_stream("application/vnd.amazon.eventstream")
            self.send_piece(aws_eventstream.event("messageStart", {"role": "assistant"}))
            cut_at = min(behaviour.after_tokens, len(generation.tokens))
            for sent, token in enumerate(generation.tokens):
                if behaviour.fails_midway and sent == cut_at:
                    break
                if not self.pause(behaviour.seconds_per_token):
                    return
                delta = {"contentBlockIndex": 0, "delta": {"text": token}}
                self.send_piece(aws_eventstream.event("contentBlockDelta", delta))
            if behaviour.fault and behaviour.after_tokens:
                self.fail(behaviour.fault)
                return
            if behaviour.status:
                kind = _STREAM_ERRORS.get(behaviour.status, "internalServerException")
                self.send_piece(aws_eventstream.exception(kind, "The stream was interrupted."))
                self.end_stream()
                return
            for kind, payload in _stream_end(generation, started):
                self.send_piece(aws_eventstream.event(kind, payload))
            self.end_stream()

    return Handler


def _stream_end(generation: Generation, started: float) -> list[tuple[str, dict[str, Any]]]:
    latency_ms = int((time.monotonic() - started) * 1000)
    return [
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": _stop_reason(generation)}),
        ("metadata", {"usage": _usage(generation), "metrics": {"latencyMs": latency_ms}}),
    ]


@contextmanager
def serve_bedrock(
    outcomes: list[Outcome], slow_s: float = 30.0, keep_alive: bool = True, text: str = "Austin."
) -> Iterator[tuple[str, FakeBedrock]]:
    """Run the fake on a free loopback port; yields (endpoint URL, the fake).
    `keep_alive=False` speaks HTTP/1.0, one connection per request."""
    fake = FakeBedrock(outcomes, slow_s, text)
    with run_server(_handler(fake), keep_alive) as server:
        fake.server = server
        fake.released = server.released
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
