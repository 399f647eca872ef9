"""A loopback stand-in for Anthropic's Messages API, for tests: real HTTP/1.1, scripted replies,
and the checks the real API makes, answered with its error bodies.

`POST /v1/messages` needs the `x-api-key` (401 authentication_error otherwise) and
`anthropic-version` (400) headers, a JSON body with `model`, `messages` and `max_tokens` (400
invalid_request_error naming the missing field), a `temperature` from 0 to 1, and no field the
API does not know ("n: Extra inputs are not permitted"). Replies, one per request (the last
repeats), are {"content": str} or {"status": 429 | 500 | 529, "retry_after": "1"}; `max_tokens`
cuts the reply (stop_reason "max_tokens"); usage counts the tokens generated (input: a fixed 13).
Every request's path, body and headers are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.providers.behaviour import Behaviour, generate
from tests.providers.http11 import Http11Handler, LoopbackServer, run_server

API_KEY = "sk-ant-test-canary"
INPUT_TOKENS = 13
KNOWN_FIELDS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "system",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "stream",
        "metadata",
        "tools",
        "tool_choice",
        "thinking",
        "service_tier",
    }
)
_ERRORS = {  # status: (error type, message), as the API words them
    401: ("authentication_error", "invalid x-api-key"),
    404: ("not_found_error", "Not found"),
    429: ("rate_limit_error", "Number of request tokens has exceeded your rate limit."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


class FakeAnthropic:
    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.paths: list[str] = []
        self.bodies: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.server: LoopbackServer | None = None
        self._lock = threading.Lock()

    def next_reply(self, path: str, body: Any, headers: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            self.paths.append(path)
            self.bodies.append(body)
            self.headers.append(headers)
            return dict(self.replies.pop(0) if len(self.replies) > 1 else self.replies[0])

    @property
    def connections(self) -> int:
        return self.server.accepted if self.server else 0


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def invalid(body: Any) -> str | None:
    """Why the API would refuse this body (400 invalid_request_error), or None."""
    if not isinstance(body, dict):
        return "Input should be a valid dictionary"
    for name in ("model", "messages", "max_tokens"):
        if name not in body:
            return f"{name}: Field required"
    unknown = sorted(set(body) - KNOWN_FIELDS)
    if unknown:
        return f"{unknown[0]}: Extra inputs are not permitted"
    if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        return "max_tokens: Input should be a valid integer greater than or equal to 1"
    temperature = body.get("temperature", 1.0)
    if not isinstance(temperature, int | float) or not 0 <= temperature <= 1:
        return "temperature: Input should be less than or equal to 1"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages or messages[0].get("role") != "user":
        return 'messages: the first message must use the "user" role'
    return None


def message_reply(model: str, text: str, cap: int) -> dict[str, Any]:
    generation = generate(text, Behaviour(), cap)
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": generation.text}],
        "stop_reason": "max_tokens" if generation.capped else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": len(generation.tokens)},
    }


def _handler(fake: FakeAnthropic) -> type[Http11Handler]:
    class Handler(Http11Handler):
        def do_POST(self) -> None:
            raw = self.read_body()
            headers = self.lower_headers()
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = None
            reply = fake.next_reply(self.path, body, headers)
            if self.path != "/v1/messages":
                self.refuse(404)
            elif headers.get("x-api-key") != API_KEY:
                self.refuse(401)
            elif "anthropic-version" not in headers:
                self.refuse(400, "anthropic-version: header is required")
            elif body is None or not headers.get("content-type", "").startswith("application/json"):
                self.refuse(400, "There was an error parsing the body as JSON")
            elif (problem := invalid(body)) is not None:
                self.refuse(400, problem)
            elif reply.get("status"):
                extra = {"retry-after": reply.get("retry_after", "0")}
                self.refuse(int(reply["status"]), **(extra if reply["status"] == 429 else {}))
            else:
                answer = message_reply(body["model"], reply["content"], body["max_tokens"])
                self.send_json(200, answer, **{"request-id": "req_01"})

        def refuse(self, status: int, message: str | None = None, **headers: str) -> None:
            kind, text = _ERRORS.get(status, ("invalid_request_error", ""))
            self.send_json(status, error_body(kind, message or text), **headers)

    return Handler


@contextmanager
def serve_anthropic(replies: list[dict[str, Any]]) -> Iterator[tuple[str, FakeAnthropic]]:
    """Run the fake on a free loopback port; yields (the API root URL, the fake)."""
    fake = FakeAnthropic(replies)
    with run_server(_handler(fake)) as server:
        fake.server = server
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
