"""AWS event-stream messages, the binary framing of Bedrock's ConverseStream replies.

A message is a prelude (total length, headers length, CRC32 of those 8 bytes), the headers
(name length, name, type 7 = string, value length, value), the payload, and a CRC32 of
everything before it (what botocore.eventstream.EventStreamBuffer reads and checks).
"""

from __future__ import annotations

import json
import struct
from binascii import crc32
from typing import Any

_STRING = 7


def _headers(headers: dict[str, str]) -> bytes:
    out = bytearray()
    for name, value in headers.items():
        key, data = name.encode(), value.encode()
        out += struct.pack("!B", len(key)) + key
        out += struct.pack("!BH", _STRING, len(data)) + data
    return bytes(out)


def message(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = _headers(headers)
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", crc32(prelude) & 0xFFFFFFFF)
    body = prelude + encoded + payload
    return body + struct.pack("!I", crc32(body) & 0xFFFFFFFF)


def event(event_type: str, payload: dict[str, Any]) -> bytes:
    """One event of a stream, e.g. ("contentBlockDelta", {"contentBlockIndex": 0, ...})."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return message(headers, json.dumps(payload).encode())


def exception(exception_type: str, text: str) -> bytes:
    """An error in the middle of a stream, e.g. ("throttlingException", "Too many requests")."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return message(headers, json.dumps({"message": text}).encode())
