"""Why a model call failed, whatever SDK raised it: the cause of a retry, or not retryable.

Four causes are retried and counted apart: the provider throttled us (HTTP 429, Bedrock
ThrottlingException), the call timed out, the connection failed or dropped, or the provider
had a server fault (5xx). Anything else (bad request, auth, a bug) is not retryable. Each
provider kind classifies its own SDK's errors (`Provider.classify_fault`).
"""

from __future__ import annotations

from typing import Any, Literal

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable

Cause = Literal["throttled", "timeout", "connection", "server"]
CAUSES: tuple[Cause, ...] = ("throttled", "timeout", "connection", "server")

Fault = tuple[Cause | None, float | None]  # (cause or None when not retryable, retry-after s)


def retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def classify(error: BaseException) -> Fault:
    """The cause of a retryable fault (None when not retryable) and the retry-after seconds
    the provider asked for, if it did."""
    if isinstance(error, ProviderThrottled):
        return "throttled", error.retry_after_s
    if isinstance(error, ProviderUnavailable):
        return error.cause, None
    if isinstance(error, TimeoutError):
        return "timeout", None
    if isinstance(error, ConnectionError):
        return "connection", None
    from lme_bench.providers.registry import fault_classifiers  # the kinds import this

    for classify_fault in fault_classifiers():
        found = classify_fault(error)
        if found[0] is not None:
            return found
    return None, None
