"""Which object-store errors are a store not answering (tried again) and which a refusal (not):
as s3fs raises them, a server error and throttling by errno, a missing object as such."""

from __future__ import annotations

import errno

import pytest

from lme_bench.results.store_retry import no_answer

REMOTE_IO = getattr(errno, "EREMOTEIO", errno.EIO)


@pytest.mark.parametrize(
    "error",
    [
        OSError(REMOTE_IO, "We encountered an internal error, please try again."),  # a 500
        OSError(errno.EBUSY, "Please reduce your request rate."),  # a 503, SlowDown
        ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
        TimeoutError("read timed out"),
    ],
)
def test_a_store_that_did_not_answer_is_asked_again(error: BaseException) -> None:
    assert no_answer(error)


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError(errno.ENOENT, "The specified key does not exist."),
        PermissionError(errno.EACCES, "Access Denied"),
        OSError(errno.EINVAL, "The specified bucket is not valid."),
    ],
)
def test_a_refusal_is_not_asked_again(error: BaseException) -> None:
    assert not no_answer(error)
