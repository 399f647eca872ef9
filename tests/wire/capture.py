"""What a client sent an MCP server, read back from the recorders' logs (http_server.py
records HTTP requests, stdio_tee.py the bytes written to a stdio server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def http_sent(log: Path) -> tuple[str, list[Any]]:
    """(every request line, header and body as text, the JSON-RPC messages in the bodies)."""
    text, messages = [], []
    for line in log.read_text(encoding="utf-8").splitlines():
        request = json.loads(line)
        head = [f"{request['method']} {request['path']}?{request['query']}"]
        head += [f"{name}: {value}" for name, value in request["headers"]]
        text.append("\n".join([*head, request["body"]]))
        if request["body"].strip():
            body = json.loads(request["body"])
            messages.extend(body if isinstance(body, list) else [body])
    return "\n\n".join(text), messages


def stdio_sent(log: Path) -> tuple[str, list[Any]]:
    """(the bytes written to the server as text, the JSON-RPC messages: one per line)."""
    text = log.read_bytes().decode("utf-8")
    return text, [json.loads(line) for line in text.splitlines() if line.strip()]


def tool_calls(messages: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) of every tools/call request, in order."""
    return [
        (m["params"]["name"], m["params"].get("arguments") or {})
        for m in messages
        if isinstance(m, dict) and m.get("method") == "tools/call"
    ]
