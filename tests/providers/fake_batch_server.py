"""A loopback server speaking OpenAI's Batch API and chat completions, for tests: real HTTP/1.1
with kept-alive connections, multipart file uploads, a batch whose status moves one step per
look (validating, in_progress, finalizing, then completed, or expired / failed), an output
file of replies and an error file of failed and expired items.

Replies come from `answer(body)`, the same for a batch item and a call-by-call request, so a
run through the batch and one call by call can be compared. Items whose input position is in
`failing` end in the error file with a server error; with `expire_after = n`, the window
closes after n items and the others end expired; `reject = True` fails the whole batch at
validation.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.providers.http11 import Http11Handler, LoopbackServer, run_server

Answer = Callable[[dict[str, Any]], str]
STEPS = ("validating", "in_progress", "finalizing")


def yes_or_no(body: dict[str, Any]) -> str:
    """A verdict that depends on the prompt only: 'yes' or 'no', about half each."""
    prompt = body["messages"][-1]["content"]
    return "yes" if hashlib.sha256(prompt.encode()).digest()[0] % 2 else "no"


def completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
    given = body.get("max_tokens", body.get("max_completion_tokens"))
    cap = int(given) if given is not None else None
    words = text.split()
    cut = cap is not None and len(words) > cap
    return {
        "id": "chatcmpl-" + hashlib.sha256(json.dumps(body).encode()).hexdigest()[:12],
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": " ".join(words[:cap] if cut else words),
                },
                "finish_reason": "length" if cut else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": min(len(words), cap) if cap else len(words),
            "total_tokens": prompt_tokens + len(words),
        },
    }


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, Any]
    looks: int = 0
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"total": 0, "completed": 0, "failed": 0}
    )

    def payload(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": 0,
            "request_counts": self.counts,
            "metadata": self.metadata,
        }


class FakeBatchJobApi:
    def __init__(
        self,
        answer: Answer = yes_or_no,
        failing: set[int] | None = None,
        expire_after: int | None = None,
        reject: bool = False,
    ) -> None:
        self.answer = answer
        self.failing = failing or set()
        self.expire_after = expire_after
        self.reject = reject
        self.hold = False  # while set, a running batch stays in progress however often looked at
        self.files: dict[str, tuple[str, str, bytes]] = {}  # id -> (name, purpose, content)
        self.batches: dict[str, FakeBatch] = {}
        self.chat_requests: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request
        self.peers: list[int] = []
        self.server: LoopbackServer | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    @property
    def connections(self) -> int:
        return self.server.accepted if self.server else 0

    def add_file(self, name: str, purpose: str, content: bytes) -> dict[str, Any]:
        with self._lock:
            file_id = self.new_id("file")
            self.files[file_id] = (name, purpose, content)
        return _file_payload(file_id, name, purpose, content)

    def look(self, batch: FakeBatch) -> None:
        """One look moves a running batch one step on; the last step ends it."""
        with self._lock:
            if batch.status in ("completed", "failed", "expired", "cancelled"):
                return
            batch.looks += 1
            if self.reject:
                batch.status = "failed"
                return
            if self.hold:
                batch.status = STEPS[1]
                batch.looks = 1
                return
            if batch.looks < len(STEPS):
                batch.status = STEPS[batch.looks]
                return
            self._finish(batch)

    def _finish(self, batch: FakeBatch) -> None:
        lines = [json.loads(x) for x in self.files[batch.input_file_id][2].splitlines() if x]
        outputs, errors = [], []
        for position, line in enumerate(lines):
            if self.expire_after is not None and position >= self.expire_after:
                errors.append(_expired_line(line))
            elif position in self.failing:
                errors.append(_failed_line(line))
            else:
                reply = completion(line["body"], self.answer(line["body"]))
                outputs.append(_output_line(line, reply))
        batch.counts = {"total": len(lines), "completed": len(outputs), "failed": len(errors)}
        batch.status = "expired" if self.expire_after is not None else "completed"
        for kind, found in (("output", outputs), ("error", errors)):
            if found:
                content = "".join(json.dumps(x) + "\n" for x in found).encode()
                file_id = self.new_id("file")
                self.files[file_id] = (f"batch_{kind}.jsonl", f"batch_{kind}", content)
                setattr(batch, f"{kind}_file_id", file_id)


def _file_payload(file_id: str, name: str, purpose: str, content: bytes) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": 0,
        "filename": name,
        "purpose": purpose,
        "status": "processed",
    }


def _output_line(line: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "batch_req_" + line["custom_id"][:8],
        "custom_id": line["custom_id"],
        "response": {"status_code": 200, "request_id": "req", "body": reply},
        "error": None,
    }


def _failed_line(line: dict[str, Any]) -> dict[str, Any]:
    error = {"message": "The server had an error processing the request", "type": "server_error"}
    return {
        "id": "batch_req_" + line["custom_id"][:8],
        "custom_id": line["custom_id"],
        "response": {"status_code": 500, "request_id": "req", "body": {"error": error}},
        "error": None,
    }


def _expired_line(line: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "batch_req_" + line["custom_id"][:8],
        "custom_id": line["custom_id"],
        "response": None,
        "error": {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        },
    }


def multipart_fields(content_type: str, data: bytes) -> dict[str, tuple[str | None, bytes]]:
    """A multipart/form-data body's fields: name -> (file name, content)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + data)
    if not message.is_multipart():
        raise ValueError("not a multipart body")
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[str(name)] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields


def _handler(fake: FakeBatchJobApi) -> type[Http11Handler]:
    class Handler(Http11Handler):
        def note(self) -> None:
            with fake._lock:
                fake.requests.append((self.command, self.path))
                fake.peers.append(self.peer)

        def do_POST(self) -> None:
            self.note()
            data = self.read_body()
            if self.path == "/v1/files":
                fields = multipart_fields(self.headers.get("Content-Type", ""), data)
                name, content = fields["file"]
                purpose = fields["purpose"][1].decode()
                self.send_json(200, fake.add_file(name or "upload", purpose, content))
            elif self.path == "/v1/batches":
                body = json.loads(data)
                if body["input_file_id"] not in fake.files:
                    self.send_json(404, {"error": {"message": "no such file"}})
                    return
                batch = FakeBatch(
                    fake.new_id("batch"),
                    body["input_file_id"],
                    body["endpoint"],
                    body["completion_window"],
                    body.get("metadata") or {},
                )
                with fake._lock:
                    fake.batches[batch.id] = batch
                self.send_json(200, batch.payload())
            elif self.path == "/v1/chat/completions":
                body = json.loads(data)
                with fake._lock:
                    fake.chat_requests.append(body)
                self.send_json(200, completion(body, fake.answer(body)))
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_GET(self) -> None:
            self.note()
            parts = self.path.strip("/").split("/")
            if parts[:2] == ["v1", "batches"] and len(parts) == 3 and parts[2] in fake.batches:
                batch = fake.batches[parts[2]]
                fake.look(batch)
                self.send_json(200, batch.payload())
            elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                found = fake.files.get(parts[2])
                if found is None:
                    self.send_json(404, {"error": {"message": "no such file"}})
                    return
                self.send_bytes(200, "application/octet-stream", found[2])
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    return Handler


@contextmanager
def serve_batches(fake: FakeBatchJobApi | None = None) -> Iterator[tuple[str, FakeBatchJobApi]]:
    """Run the fake on a free loopback port; yields (base_url ending in /v1, the fake)."""
    fake = fake or FakeBatchJobApi()
    with run_server(_handler(fake)) as server:
        fake.server = server
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", fake
