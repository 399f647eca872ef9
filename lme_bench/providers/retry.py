"""Retry a model call on throttling and transient faults, with exponential backoff and jitter.

Only throttling (429, ThrottlingException) and transient faults (5xx, timeouts, dropped
connections) are retried; anything else (bad request, auth, a bug) fails at once. A
`Retry-After` the provider sends is honoured. Retries happen inside the task, so one 429 never
restarts a whole question.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable

T = TypeVar("T")
Fault = Literal["throttled", "transient"]

_BEDROCK_THROTTLING = {"ThrottlingException", "TooManyRequestsException"}
_BEDROCK_TRANSIENT = {
    "ServiceUnavailableException",
    "InternalServerException",
    "ModelNotReadyException",
    "ModelTimeoutException",
}


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 6  # calls in all, the first included
    base_s: float = 1.0
    cap_s: float = 60.0
    throttle_base_s: float = 2.0  # Bedrock configs raise this (the original benchmarker used 5 s)
    throttle_cap_s: float = 120.0
    jitter: float = 0.25  # ± fraction of each delay

    def delay(
        self, fault: Fault, retry: int, retry_after_s: float | None, rng: random.Random
    ) -> float:
        base, cap = (
            (self.throttle_base_s, self.throttle_cap_s)
            if fault == "throttled"
            else (self.base_s, self.cap_s)
        )
        wait = min(cap, base * 2**retry) * (1 + rng.uniform(-self.jitter, self.jitter))
        if retry_after_s is not None:
            wait = max(wait, min(retry_after_s, cap))
        return max(0.0, float(wait))


def _retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def classify(error: BaseException) -> tuple[Fault | None, float | None]:
    """(fault kind or None when not retryable, retry-after seconds if the provider said)."""
    if isinstance(error, ProviderThrottled):
        return "throttled", error.retry_after_s
    if isinstance(error, ProviderUnavailable | TimeoutError | ConnectionError):
        return "transient", None
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        openai = None  # type: ignore[assignment]
    if openai is not None:
        if isinstance(error, openai.RateLimitError):
            return "throttled", _retry_after(error.response.headers)
        if isinstance(error, openai.APITimeoutError | openai.APIConnectionError):
            return "transient", None
        if isinstance(error, openai.APIStatusError) and error.status_code >= 500:
            return "transient", _retry_after(error.response.headers)
    try:
        from botocore.exceptions import ClientError, ReadTimeoutError
        from botocore.exceptions import ConnectionError as BotoConnectionError
    except ImportError:  # pragma: no cover - botocore comes with langchain-aws
        return None, None
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        if code in _BEDROCK_THROTTLING:
            return "throttled", None
        if code in _BEDROCK_TRANSIENT:
            return "transient", None
    if isinstance(error, ReadTimeoutError | BotoConnectionError):
        return "transient", None
    return None, None


@dataclass
class RetryCount:
    retries: int = 0
    throttled: int = 0


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    count: RetryCount | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> T:
    """Await `call()`; on a retryable fault wait and try again, up to `policy.attempts` calls."""
    rng = rng or random.Random()
    count = count if count is not None else RetryCount()
    for attempt in range(policy.attempts):
        try:
            return await call()
        except Exception as error:
            fault, retry_after = classify(error)
            if fault is None or attempt + 1 >= policy.attempts:
                raise
            count.retries += 1
            count.throttled += fault == "throttled"
            await sleep(policy.delay(fault, attempt, retry_after, rng))
    raise AssertionError("unreachable")  # pragma: no cover
