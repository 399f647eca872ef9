"""A loopback stand-in for Anthropic's Message Batches API and its Messages API, for tests: real
HTTP/1.1 with kept-alive connections, the key and version headers checked, each request's
params checked as the Messages API checks a body, a batch `in_progress` for two looks and then
`ended` with a results URL, and results as JSON lines: succeeded with the message, errored (the
items at `failing` positions) or expired (those from `expire_after` on).

Replies come from `answer(body)`, the same for a batch item and a call-by-call request.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.providers.fake_anthropic_server import API_KEY, error_body, invalid, message_reply
from tests.providers.fake_batch_server import Answer, yes_or_no
from tests.providers.http11 import Http11Handler, LoopbackServer, run_server

LOOKS_IN_PROGRESS = 2
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class FakeMessageBatch:
    id: str
    requests: list[dict[str, Any]]
    looks: int = 0
    ended: bool = False
    results: list[dict[str, Any]] = field(default_factory=list)

    def payload(self, root: str) -> dict[str, Any]:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if self.ended:
            for line in self.results:
                counts[line["result"]["type"]] += 1
        else:
            counts["processing"] = len(self.requests)
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": "ended" if self.ended else "in_progress",
            "request_counts": counts,
            "ended_at": "2026-01-01T00:00:00Z" if self.ended else None,
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{root}/v1/messages/batches/{self.id}/results" if self.ended else None,
        }


class FakeAnthropicBatches:
    def __init__(
        self,
        answer: Answer = yes_or_no,
        failing: set[int] | None = None,
        expire_after: int | None = None,
    ) -> None:
        self.answer = answer
        self.failing = failing or set()
        self.expire_after = expire_after
        self.batches: dict[str, FakeMessageBatch] = {}
        self.message_requests: list[dict[str, Any]] = []
        self.server: LoopbackServer | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def connections(self) -> int:
        return self.server.accepted if self.server else 0

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        return message_reply(body["model"], self.answer(body), body["max_tokens"])

    def look(self, batch: FakeMessageBatch) -> None:
        with self._lock:
            batch.looks += 1
            if batch.ended or batch.looks <= LOOKS_IN_PROGRESS:
                return
            for position, request in enumerate(batch.requests):
                result: dict[str, Any]
                if self.expire_after is not None and position >= self.expire_after:
                    result = {"type": "expired"}
                elif position in self.failing:
                    error = error_body("api_error", "Internal server error")
                    result = {"type": "errored", "error": error}
                else:
                    result = {"type": "succeeded", "message": self.reply(request["params"])}
                batch.results.append({"custom_id": request["custom_id"], "result": result})
            batch.ended = True


def _handler(fake: FakeAnthropicBatches) -> type[Http11Handler]:
    class Handler(Http11Handler):
        @property
        def root(self) -> str:
            return f"http://{self.headers.get('Host')}"

        def refused(self) -> bool:
            headers = self.lower_headers()
            if headers.get("x-api-key") != API_KEY:
                self.send_json(401, error_body("authentication_error", "invalid x-api-key"))
            elif "anthropic-version" not in headers:
                message = "anthropic-version: header is required"
                self.send_json(400, error_body("invalid_request_error", message))
            else:
                return False
            return True

        def do_POST(self) -> None:
            body = json.loads(self.read_body() or b"null")
            if self.refused():
                return
            if self.path == "/v1/messages":
                problem = invalid(body)
                if problem:
                    self.send_json(400, error_body("invalid_request_error", problem))
                    return
                with fake._lock:
                    fake.message_requests.append(body)
                self.send_json(200, fake.reply(body))
            elif self.path == "/v1/messages/batches":
                requests = body.get("requests") if isinstance(body, dict) else None
                problems = [
                    f"requests.{n}: " + (invalid(r.get("params")) or "custom_id: bad")
                    for n, r in enumerate(requests or [])
                    if invalid(r.get("params")) or not _CUSTOM_ID.match(str(r.get("custom_id")))
                ]
                if not requests or problems:
                    message = problems[0] if problems else "requests: Field required"
                    self.send_json(400, error_body("invalid_request_error", message))
                    return
                batch = FakeMessageBatch(f"msgbatch_{next(fake._ids):04d}", requests)
                with fake._lock:
                    fake.batches[batch.id] = batch
                self.send_json(200, batch.payload(self.root))
            else:
                self.send_json(404, error_body("not_found_error", "Not found"))

        def do_GET(self) -> None:
            if self.refused():
                return
            parts = self.path.strip("/").split("/")
            batch = (
                fake.batches.get(parts[3]) if parts[:3] == ["v1", "messages", "batches"] else None
            )
            if batch is None or len(parts) > 5:
                self.send_json(404, error_body("not_found_error", "Not found"))
            elif len(parts) == 4:
                fake.look(batch)
                self.send_json(200, batch.payload(self.root))
            elif parts[4] == "results" and batch.ended:
                data = "".join(json.dumps(line) + "\n" for line in batch.results).encode()
                self.send_bytes(200, "application/binary", data)
            else:
                self.send_json(404, error_body("not_found_error", "Not found"))

    return Handler


@contextmanager
def serve_anthropic_batches(
    fake: FakeAnthropicBatches | None = None,
) -> Iterator[tuple[str, FakeAnthropicBatches]]:
    """Run the fake on a free loopback port; yields (the API root URL, the fake)."""
    fake = fake or FakeAnthropicBatches()
    with run_server(_handler(fake)) as server:
        fake.server = server
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
