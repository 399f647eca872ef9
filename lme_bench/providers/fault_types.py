"""The causes of a retryable model-call fault, and what a classifier answers."""

from __future__ import annotations

from typing import Any, Literal

Cause = Literal["throttled", "timeout", "connection", "server"]
CAUSES: tuple[Cause, ...] = ("throttled", "timeout", "connection", "server")

Fault = tuple[Cause | None, float | None]  # (cause or None when not retryable, retry-after s)


def retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
