"""A loopback OpenAI-compatible chat server for tests: real HTTP/1.1, scripted replies, faults.

Replies, one per request (the last repeats), are dicts {"content": str} or {"tool_calls":
[(name, args)]}, or functions of the request body returning one. A reply may carry
"behaviour": a `Behaviour` (tests/providers/behaviour.py) for that request, else the server's
applies: latency, a long reply generated at a given speed, a dropped or stalled connection, an
error status. {"status": 429, "retry_after": "1"} answers that error (its text from an optional
"message"). The request's `max_completion_tokens` / `max_tokens` cuts the reply
(finish_reason "length"); usage counts the tokens generated (prompt tokens: a fixed 11).
`"stream": true` is answered as server-sent events, one token per event, with a usage chunk
when `stream_options.include_usage` asks for one. A reasoning model's name (o3, gpt-5-mini, …)
gets OpenAI's 400 for what it refuses (tests/providers/openai_reasoning_rules.py), and its
reasoning tokens count against the cap and in the usage.

Every request's body (parsed, and as the bytes sent: `raw`), headers and connection (the
client's port) are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.providers.behaviour import Behaviour, Generation, generate, split_tokens
from tests.providers.http11 import Http11Handler, LoopbackServer, run_server
from tests.providers.openai_reasoning_rules import reasoning_tokens, refusal

PROMPT_TOKENS = 11

_ERRORS: dict[int, tuple[str, str]] = {  # status: (error type, message), as OpenAI words them
    429: ("requests", "Rate limit reached for requests"),
    500: ("server_error", "The server had an error while processing your request. Sorry!"),
    503: ("server_error", "The engine is currently overloaded, please try again later"),
}
_BAD_GATEWAY = (  # a proxy's gateway error is a page, not JSON
    b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
)


class FakeOpenAI:
    def __init__(self, replies: list[Any], behaviour: Behaviour | None = None) -> None:
        self.replies = list(replies)
        self.behaviour = behaviour or Behaviour()
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []  # each request's body exactly as it came
        self.headers: list[dict[str, str]] = []
        self.peers: list[int] = []  # the client port of each request's connection
        self.server: LoopbackServer | None = None
        self._lock = threading.Lock()

    def next_reply(
        self, body: dict[str, Any], headers: dict[str, str], peer: int = 0, raw: bytes = b""
    ) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            self.raw.append(raw)
            self.headers.append(headers)
            self.peers.append(peer)
            reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return dict(reply(body) if callable(reply) else reply)

    @property
    def connections(self) -> int:
        """Connections the server accepted."""
        return self.server.accepted if self.server else 0


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    kind, text = _ERRORS.get(status, ("server_error", "Internal server error"))
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message or text, "type": kind, "param": None, "code": code}}


def cap_of(body: dict[str, Any]) -> int | None:
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    return int(cap) if cap is not None else None


def reasoning_spent(body: dict[str, Any]) -> int:
    """The reasoning tokens a reasoning model spends before its reply, within the cap."""
    cap = cap_of(body)
    return reasoning_tokens(body) if cap is None else min(reasoning_tokens(body), cap)


def tool_calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(reply.get("tool_calls", []))
    ]


def finish_reason(generation: Generation, calls: list[dict[str, Any]]) -> str:
    return "length" if generation.capped else "tool_calls" if calls else "stop"


def usage(
    generation: Generation, calls: list[dict[str, Any]], reasoning: int = 0
) -> dict[str, Any]:
    arguments = sum(len(split_tokens(c["function"]["arguments"])) for c in calls)
    completion = len(generation.tokens) + arguments + reasoning
    found: dict[str, Any] = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": completion,
        "total_tokens": PROMPT_TOKENS + completion,
    }
    if reasoning:
        found["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return found


def completion(
    model: str, generation: Generation, calls: list[dict[str, Any]], reasoning: int = 0
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": generation.text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "usage": usage(generation, calls, reasoning),
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason(generation, calls)}
        ],
    }


def _handler(fake: FakeOpenAI) -> type[Http11Handler]:
    class Handler(Http11Handler):
        def do_POST(self) -> None:
            raw = self.read_body()
            body = json.loads(raw)
            reply = fake.next_reply(body, self.lower_headers(), self.peer, raw)
            behaviour: Behaviour = reply.get("behaviour", fake.behaviour)
            if not self.pause(behaviour.latency_s):
                return
            status = behaviour.status or reply.get("status", 200)
            in_stream = bool(body.get("stream")) and behaviour.fails_midway
            refused = refusal(body)
            if refused is not None:
                self.send_json(400, refused)
            elif behaviour.fault and not behaviour.after_tokens:
                self.fail(behaviour.fault)
            elif status != 200 and not in_stream:
                self.send_error_reply(status, reply)
            else:
                cap = cap_of(body)
                if cap is not None:  # a reasoning model's reasoning comes out of the cap
                    cap -= reasoning_spent(body)
                generation = generate(reply.get("content") or "", behaviour, cap)
                calls = tool_calls(reply)
                if body.get("stream"):
                    self.stream(body, generation, calls, behaviour)
                else:
                    self.answer(body, generation, calls, behaviour)

        def send_error_reply(self, status: int, reply: dict[str, Any]) -> None:
            headers = {"Retry-After": reply.get("retry_after", "0")} if status == 429 else {}
            if status == 502:
                self.send_bytes(502, "text/html", _BAD_GATEWAY)
            else:
                self.send_json(status, error_body(status, reply.get("message")), **headers)

        def answer(
            self,
            body: dict[str, Any],
            generation: Generation,
            calls: list[dict[str, Any]],
            behaviour: Behaviour,
        ) -> None:
            if not self.pause(len(generation.tokens) * behaviour.seconds_per_token):
                return
            payload = completion(body["model"], generation, calls, reasoning_spent(body))
            if behaviour.fault:
                self.send_cut(200, payload, behaviour.fault)
            else:
                self.send_json(200, payload)

        def stream(
            self,
            body: dict[str, Any],
            generation: Generation,
            calls: list[dict[str, Any]],
            behaviour: Behaviour,
        ) -> None:
            self.start_stream("text/event-stream", **{"Cache-Control": "no-cache"})
            cut_at = min(behaviour.after_tokens, len(generation.tokens))
            for sent, event in enumerate(_events(body, generation, calls)):
                if behaviour.fails_midway and sent > cut_at:  # `cut_at` tokens were sent
                    if behaviour.fault:
                        self.fail(behaviour.fault)
                        return
                    event = error_body(behaviour.status or 500)
                elif 0 < sent <= len(generation.tokens) and not self.pause(
                    behaviour.seconds_per_token
                ):
                    return
                self.send_piece(f"data: {json.dumps(event)}\n\n".encode())
                if "error" in event:
                    break
            self.send_piece(b"data: [DONE]\n\n")
            self.end_stream()

    return Handler


def _events(
    body: dict[str, Any], generation: Generation, calls: list[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """The chunks of a streamed reply: the role, one per token, tool calls, the finish, usage."""
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    base: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body["model"],
    }
    if with_usage:
        base["usage"] = None

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    yield chunk({"role": "assistant", "content": ""})
    for token in generation.tokens:
        yield chunk({"content": token})
    for index, call in enumerate(calls):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, finish_reason(generation, calls))
    if with_usage:
        yield {**base, "choices": [], "usage": usage(generation, calls)}


@contextmanager
def serve(
    replies: list[Any],
    behaviour: Behaviour | None = None,
    keep_alive: bool = True,
    idle_timeout_s: float | None = None,
) -> Iterator[tuple[str, FakeOpenAI]]:
    """Run the fake on a free loopback port; yields (base_url ending in /v1, the fake).
    `behaviour` applies to every reply that names none; `keep_alive=False` speaks HTTP/1.0;
    `idle_timeout_s` closes a kept-alive connection left idle that long."""
    fake = FakeOpenAI(replies, behaviour)
    with run_server(_handler(fake), keep_alive, idle_timeout_s) as server:
        fake.server = server
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", fake
