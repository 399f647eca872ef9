"""Our memory server over streamable HTTP that records every request a client sends it
(method, path, headers, body: one JSON line each), with two test-only switches:
`--no-dedup` stores every add_entry, as a memory system that does not de-duplicate does, and
`--crash-after-adds N` SIGKILLs the server when the (N+1)th add_entry arrives, before it is
handled (with `--no-queue`, exactly N entries are then stored).

    python -m tests.wire.http_server --path DB --port PORT --record LOG [--no-dedup]
        [--no-queue] [--crash-after-adds N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import uvicorn

from lme_bench.reference_memory import store as store_module
from lme_bench.reference_memory.mcp_server import build_server
from lme_bench.reference_memory.service import MemoryService
from lme_bench.reference_memory.store import EmbeddedStore

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def tool_names(body: bytes) -> list[str]:
    """The tools a JSON-RPC request body calls."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return []
    messages = parsed if isinstance(parsed, list) else [parsed]
    calls = [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"]
    return [str((m.get("params") or {}).get("name")) for m in calls]


class Recorder:
    """ASGI middleware: log each HTTP request whole, then hand it on unchanged."""

    def __init__(self, app: Any, log: Path, crash_after_adds: int | None) -> None:
        self.app, self.log, self.crash_after_adds = app, log, crash_after_adds
        self.adds = 0

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        record = {
            "method": scope["method"],
            "path": scope["path"],
            "query": scope["query_string"].decode("latin-1"),
            "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
            "body": body.decode("utf-8", errors="replace"),
        }
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        self.adds += tool_names(bytes(body)).count("add_entry")
        if self.crash_after_adds is not None and self.adds > self.crash_after_adds:
            os.kill(os.getpid(), signal.SIGKILL)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--no-dedup", action="store_true")
    parser.add_argument("--no-queue", action="store_true")
    parser.add_argument("--crash-after-adds", type=int)
    args = parser.parse_args()
    if args.no_dedup:  # every entry gets a content key of its own: nothing is ignored
        store_module._content_key = lambda entry, tags_json: uuid.uuid4().hex
    store = EmbeddedStore(args.path)
    service = MemoryService(store, queue_writes=not args.no_queue)
    server = build_server(service, host="127.0.0.1", port=args.port)
    app = Recorder(server.streamable_http_app(), args.record, args.crash_after_adds)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
