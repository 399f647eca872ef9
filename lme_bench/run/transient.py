"""Which failures are worth a retry: transient faults, never bad input."""

from __future__ import annotations

import sqlite3

from lme_bench.backends.protocol import TransientMemoryError
from lme_bench.common.secrets import RedactedError, redact_secrets
from lme_bench.common.stop_signal import RunStopped
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.dataset.errors import DatasetError
from lme_bench.providers.faults import classify
from lme_bench.results.store import StorageError
from lme_bench.run.failure_origin import copy_origin, exception_text, keep_origin, with_origin

_PERMANENT = (
    DatasetError,
    ConfigError,
    TypeError,
    KeyError,
    AttributeError,
    NotImplementedError,
    RunStopped,
    StorageError,  # an object store's calls were already retried (store_retry.py)
)
# TransientMemoryError: what a memory backend raises for a fault worth retrying (the protocol).
_TRANSIENT = (TimeoutError, ConnectionError, sqlite3.OperationalError, TransientMemoryError)


def is_transient(error: BaseException) -> bool:
    """Worth retrying the whole task: a lost connection, a locked database, a memory backend's
    TransientMemoryError, or a model provider still throttling or failing (5xx, timeout) after
    the retries made inside the task."""
    if isinstance(error, RedactedError):
        return error.transient
    if isinstance(error, _PERMANENT):
        return False
    if isinstance(error, _TRANSIENT):
        return True
    if classify(error)[0] is not None:
        return True
    return isinstance(error, OSError)


def scrubbed(error: Exception, settings: Settings | None = None) -> Exception:
    """`error` itself when its text is clean, else a RedactedError with the secrets masked;
    either way marked with where it was raised and its traceback (lme_bench.run.failure_origin),
    as the harness calls this where a question's error leaves its work."""
    keep_origin(error)
    text = f"{type(error).__name__}: {error}"
    clean = redact_secrets(text, settings)
    if clean == text:
        return error
    redacted = RedactedError(clean, is_transient(error))
    copy_origin(error, redacted)
    return redacted


def retry_notice(what: str, attempt: int, attempts: int, error: BaseException) -> str:
    """The one log line a retried stage gets: which question and stage, which attempt of how
    many failed, and with what, e.g. `ingest q1 (multi-session): attempt 1 of 3 failed with
    TransientMemoryError: server busy (at my_backend.py:42 in search); retrying`."""
    failure = redact_secrets(with_origin(exception_text(error), error))
    return f"{what}: attempt {attempt} of {attempts} failed with {failure}; retrying"
