"""How an object store's calls are retried when the store does not answer: a lost connection,
a timeout, a server error or throttling are tried again with doubling waits, a bounded number
of times; a missing object, a refused credential or a bad name fail at once.

What gives up is one StoreUnavailable naming the object's URL (never a credential), not the
SDK's own exception chain.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from lme_bench.config.settings import Settings

T = TypeVar("T")

# Exception classes of botocore, aiohttp and fsspec that mean "no answer", by name, so this
# module needs none of those packages.
_NO_ANSWER = frozenset(
    {
        "EndpointConnectionError",
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "ConnectionClosedError",
        "HTTPClientError",
        "ResponseStreamingError",
        "ClientConnectorError",
        "ClientOSError",
        "ServerDisconnectedError",
        "ClientPayloadError",
        "FSTimeoutError",
    }
)
# s3fs raises a 500 (InternalError, "please try again") as EREMOTEIO, a 503 as EBUSY
_REMOTE_IO = getattr(errno, "EREMOTEIO", errno.EIO)
_BUSY_ERRNOS = frozenset({errno.EBUSY, errno.EAGAIN, errno.ETIMEDOUT, errno.ECONNRESET, _REMOTE_IO})
_BUSY_WORDS = ("SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", " 503", " 500")
_PERMANENT = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def no_answer(error: BaseException) -> bool:
    """Whether `error` says the store did not answer (worth a retry), not that it refused."""
    if isinstance(error, _PERMANENT):
        return False
    if isinstance(error, (ConnectionError, TimeoutError)):
        return True
    if any(kind.__name__ in _NO_ANSWER for kind in type(error).__mro__):
        return True
    if isinstance(error, OSError) and error.errno in _BUSY_ERRNOS:
        return True
    text = str(error)
    return any(word in text for word in _BUSY_WORDS)


@dataclass(frozen=True)
class StoreRetry:
    """Calls in all and the waits between them: `first_wait_s`, doubled each time, at most
    `max_wait_s`. `timeout_s` bounds each call's connecting and each read (S3)."""

    attempts: int = 5
    first_wait_s: float = 1.0
    max_wait_s: float = 20.0
    timeout_s: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    def wait(self, retry: int) -> float:
        return float(min(self.max_wait_s, self.first_wait_s * 2**retry))

    def call(self, work: Callable[[], T], gave_up: Callable[[BaseException, int], Exception]) -> T:
        """`work()`, tried again while the store does not answer; then `gave_up(last error,
        attempts made)` raised. Any other error is raised as it is."""
        for attempt in range(1, self.attempts + 1):
            try:
                return work()
            except Exception as exc:
                if not no_answer(exc):
                    raise
                if attempt == self.attempts:
                    raise gave_up(exc, attempt) from None
                self.sleep(self.wait(attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover


def store_retry(settings: Settings) -> StoreRetry:
    """The run's retries of object store calls (`[run] store_retries` and the rest)."""
    run = settings.run
    return StoreRetry(run.store_retries + 1, run.store_retry_wait_s, timeout_s=run.store_timeout_s)
