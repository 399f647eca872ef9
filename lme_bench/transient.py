"""Which failures are worth a retry: transient faults, never bad input."""

from __future__ import annotations

import sqlite3

from lme_bench.config import ConfigError
from lme_bench.dataset.errors import DatasetError
from lme_bench.providers.faults import classify
from lme_bench.secrets import RedactedError
from lme_bench.stop_signal import RunStopped

_PERMANENT = (
    DatasetError,
    ConfigError,
    TypeError,
    KeyError,
    AttributeError,
    NotImplementedError,
    RunStopped,
)
_TRANSIENT = (TimeoutError, ConnectionError, sqlite3.OperationalError)


def is_transient(error: BaseException) -> bool:
    """Worth retrying the whole task: a lost connection, a locked database, or a model provider
    still throttling or failing (5xx, timeout) after the retries made inside the task."""
    if isinstance(error, RedactedError):
        return error.transient
    if isinstance(error, _PERMANENT):
        return False
    if isinstance(error, _TRANSIENT):
        return True
    if classify(error)[0] is not None:
        return True
    return isinstance(error, OSError)
