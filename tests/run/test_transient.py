from __future__ import annotations

import sqlite3

import pytest

from lme_bench.backends.protocol import TransientMemoryError
from lme_bench.config.settings import ConfigError
from lme_bench.dataset.errors import DatasetError
from lme_bench.providers.errors import ProviderConfigError, ProviderThrottled, ProviderUnavailable
from lme_bench.run.transient import is_transient


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError(),
        ConnectionResetError(),
        sqlite3.OperationalError("database is locked"),
        ProviderThrottled("still throttled after retries"),
        ProviderUnavailable("503"),
        TransientMemoryError("server busy"),  # what a memory backend raises to be retried
    ],
)
def test_transient_faults_are_retried(error: BaseException) -> None:
    assert is_transient(error)


@pytest.mark.parametrize(
    "error",
    [
        DatasetError("d.json", "bad"),
        ConfigError("bad"),
        ProviderConfigError("no key"),
        ValueError("bad"),
        KeyError("x"),
    ],
)
def test_bad_input_is_never_retried(error: BaseException) -> None:
    assert not is_transient(error)
