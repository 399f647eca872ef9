"""A loopback OpenAI-compatible chat server for tests: real HTTP, scripted replies, 429s.

Each request body is recorded. Replies are dicts {"content": str} or {"tool_calls": [(name,
args)]}, or functions of the request body returning one; a reply {"status": 429,
"retry_after": "1"} answers with that error instead (its text from an optional "message").
Streaming (`"stream": true`) is answered as server-sent events, chunk by chunk.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.providers.json_http import JsonHandler


class FakeOpenAI:
    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return dict(reply(body) if callable(reply) else reply)


def _message(reply: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(reply.get("tool_calls", []))
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    return message


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = fake.next_reply(body, {k.lower(): v for k, v in self.headers.items()})
            if reply.get("status", 200) != 200:
                message = reply.get("message", "slow down")
                error = {"error": {"message": message, "type": "rate_limit", "code": None}}
                self._json(reply["status"], error, {"Retry-After": reply.get("retry_after", "0")})
                return
            message = _message(reply)
            usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
            if not body.get("stream"):
                self._json(
                    200,
                    {
                        "id": "cmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "usage": usage,
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls"
                                if "tool_calls" in message
                                else "stop",
                            }
                        ],
                    },
                    {},
                )
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(body["model"], message, usage):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


def _chunks(model: str, message: dict[str, Any], usage: dict[str, int]) -> Iterator[dict[str, Any]]:
    base = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model}
    text = message.get("content") or ""
    for i in range(0, len(text), 4):
        yield {**base, "choices": [{"index": 0, "delta": {"content": text[i : i + 4]}}]}
    for index, call in enumerate(message.get("tool_calls", [])):
        delta = {"tool_calls": [{"index": index, **call}]}
        yield {**base, "choices": [{"index": 0, "delta": delta}]}
    reason = "tool_calls" if message.get("tool_calls") else "stop"
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
    yield {**base, "choices": [], "usage": usage}


@contextmanager
def serve(replies: list[Any]) -> Iterator[tuple[str, FakeOpenAI]]:
    """Run the fake on a free loopback port; yields (base_url ending in /v1, the fake)."""
    fake = FakeOpenAI(replies)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", fake
    finally:
        server.shutdown()
        server.server_close()
