"""Which failures are worth a retry: transient faults, never bad input."""

from __future__ import annotations

import sqlite3

from lme_bench.config import ConfigError
from lme_bench.dataset.errors import DatasetError

_PERMANENT = (DatasetError, ConfigError, TypeError, KeyError, AttributeError, NotImplementedError)
_TRANSIENT = (TimeoutError, ConnectionError, sqlite3.OperationalError)


def is_transient(error: BaseException) -> bool:
    if isinstance(error, _PERMANENT):
        return False
    if isinstance(error, _TRANSIENT):
        return True
    return isinstance(error, OSError)
