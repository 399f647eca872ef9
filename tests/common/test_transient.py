from __future__ import annotations

import sqlite3

import pytest

from lme_bench.common.transient import is_transient
from lme_bench.config.settings import ConfigError
from lme_bench.dataset.errors import DatasetError
from lme_bench.providers.errors import ProviderConfigError, ProviderThrottled, ProviderUnavailable


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError(),
        ConnectionResetError(),
        sqlite3.OperationalError("database is locked"),
        ProviderThrottled("still throttled after retries"),
        ProviderUnavailable("503"),
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
