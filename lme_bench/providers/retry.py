"""Retry a model call on throttling and transient faults, with exponential backoff and jitter.

Only throttling (429, ThrottlingException) and transient faults (5xx, timeouts, failed or
dropped connections) are retried (`lme_bench.providers.faults.classify`); anything else (bad
request, auth, a bug) fails at once. A `Retry-After` the provider sends is honoured. Retries
happen inside the task, so one 429 never restarts a whole question. Every retry is counted
by its cause.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from lme_bench.providers.faults import CAUSES, Cause, classify
from lme_bench.providers.retry_policy import RetryPolicy

__all__ = [
    "RETRY_COLUMNS",
    "RetryCount",
    "RetryPolicy",
    "call_with_retry",
    "classify",
    "retries_text",
    "retry_totals",
    "set_retry_columns",
]

T = TypeVar("T")

# Row columns of every table that accounts model calls: the total, then one per cause.
RETRY_COLUMNS = ("retries", *(f"retries_{cause}" for cause in CAUSES))


@dataclass
class RetryCount:
    """Retries made, by cause; `retries` is their total."""

    throttled: int = 0
    timeout: int = 0
    connection: int = 0
    server: int = 0

    @property
    def retries(self) -> int:
        return self.throttled + self.timeout + self.connection + self.server

    def add(self, cause: Cause) -> None:
        setattr(self, cause, getattr(self, cause) + 1)

    def columns(self) -> dict[str, int]:
        """The row columns RETRY_COLUMNS names, with these counts."""
        by_cause = [getattr(self, cause) for cause in CAUSES]
        return dict(zip(RETRY_COLUMNS, [self.retries, *by_cause], strict=True))


def set_retry_columns(row: object, count: RetryCount) -> None:
    """Copy `count` into the RETRY_COLUMNS of a row (record, hypothesis or score)."""
    for column, value in count.columns().items():
        setattr(row, column, value)


def retry_totals(rows: Iterable[object]) -> dict[str, int]:
    """RETRY_COLUMNS summed over rows that carry them (records, hypotheses, scores)."""
    totals = dict.fromkeys(RETRY_COLUMNS, 0)
    for row in rows:
        for column in RETRY_COLUMNS:
            totals[column] += int(getattr(row, column))
    return totals


def retries_text(totals: Mapping[str, Any]) -> str:
    """RETRY_COLUMNS totals in words: 12 retries (throttled 10, timeout 1, connection 1, …)."""
    causes = ", ".join(f"{cause} {totals[f'retries_{cause}']}" for cause in CAUSES)
    return f"{totals['retries']} retries ({causes})"


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
            cause, retry_after = classify(error)
            if cause is None or attempt + 1 >= policy.attempts:
                raise
            count.add(cause)
            await sleep(policy.delay(cause, attempt, retry_after, rng))
    raise AssertionError("unreachable")  # pragma: no cover
