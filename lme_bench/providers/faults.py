"""Why a model call failed, whatever SDK raised it: the cause of a retry, or not retryable.

Four causes are retried and counted apart: the provider throttled us (HTTP 429, Bedrock
ThrottlingException), the call timed out, the connection failed or dropped, or the provider
had a server fault (5xx). Anything else (bad request, auth, a bug) is not retryable.
"""

from __future__ import annotations

from typing import Any, Literal

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable

Cause = Literal["throttled", "timeout", "connection", "server"]
CAUSES: tuple[Cause, ...] = ("throttled", "timeout", "connection", "server")

Fault = tuple[Cause | None, float | None]  # (cause or None when not retryable, retry-after s)

_BEDROCK_CODES: dict[str, Cause] = {
    "ThrottlingException": "throttled",
    "TooManyRequestsException": "throttled",
    "ServiceUnavailableException": "server",
    "InternalServerException": "server",
    "ModelNotReadyException": "server",
    "ModelTimeoutException": "timeout",
}


def _retry_after(headers: Any) -> float | None:
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
    found = _classify_openai(error)
    if found[0] is not None:
        return found
    return _classify_botocore(error)


def _classify_openai(error: BaseException) -> Fault:
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return None, None
    if isinstance(error, openai.RateLimitError):
        return "throttled", _retry_after(error.response.headers)
    if isinstance(error, openai.APITimeoutError):  # a subclass of APIConnectionError
        return "timeout", None
    if isinstance(error, openai.APIConnectionError):
        return "connection", None
    if isinstance(error, openai.APIStatusError) and error.status_code >= 500:
        return "server", _retry_after(error.response.headers)
    return None, None


def _classify_botocore(error: BaseException) -> Fault:
    try:
        from botocore import exceptions as boto
    except ImportError:  # pragma: no cover - botocore comes with langchain-aws
        return None, None
    if isinstance(error, boto.ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        if code in _BEDROCK_CODES:
            return _BEDROCK_CODES[code], None
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if status == 429:
            return "throttled", None
        return ("server", None) if status >= 500 else (None, None)
    if isinstance(error, boto.ReadTimeoutError | boto.ConnectTimeoutError):
        return "timeout", None
    # what botocore's own retries treat as transient: failed, refused or dropped connections,
    # and a body cut short (lme_bench.providers.bedrock checks its length)
    if isinstance(error, boto.ConnectionError | boto.HTTPClientError | boto.IncompleteReadError):
        return "connection", None
    return None, None
