"""Keep credentials out of what a run writes: error text in tables, the summary, logs.

Keys live only in the environment, but a provider may echo one back (an HTTP 401 body, an SDK
exception), and that text then flows into results. `redact_secrets` masks the value of every
variable that holds a credential wherever text becomes an error string.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lme_bench.config.settings import Settings

# Always secret, whatever the config says.
ALWAYS_SECRET: tuple[str, ...] = ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
# Also secret by name, so call sites without the settings still mask e.g. a provider's LOCAL_KEY.
_SECRET_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD)$", re.I)
# Shorter values are not keys (and masking them would mangle ordinary words).
MIN_SECRET_CHARS = 8


def secret_env_names(
    settings: Settings | None = None, environ: Mapping[str, str] | None = None
) -> list[str]:
    """Names of the environment variables whose values must never be written anywhere."""
    env = os.environ if environ is None else environ
    names = set(ALWAYS_SECRET) | {name for name in env if _SECRET_NAME.search(name)}
    if settings is not None:
        names |= {p.api_key_env for p in settings.providers.values() if p.api_key_env}
        # The MCP backends' [memory.params] headers_from_env, read as written (redaction never
        # fails on a bad config): a value is VARIABLE or PREFIX VARIABLE ("Bearer LME_TOKEN").
        headers = settings.memory.params.get("headers_from_env")
        specs = headers.values() if isinstance(headers, Mapping) else ()
        names |= {spec.split()[-1] for spec in specs if isinstance(spec, str) and spec.strip()}
    return sorted(names)


def redact_secrets(
    text: str, settings: Settings | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """`text` with each secret value replaced by `[redacted NAME]`."""
    env = os.environ if environ is None else environ
    values: dict[str, str] = {}
    for name in secret_env_names(settings, env):
        value = env.get(name, "").strip()
        if len(value) >= MIN_SECRET_CHARS:
            values.setdefault(value, name)
    for value in sorted(values, key=len, reverse=True):  # a key inside a longer one: longer first
        text = text.replace(value, f"[redacted {values[value]}]")
    return text


class RedactingLogFilter(logging.Filter):
    """Masks secrets in a log record (message, arguments and traceback) before any handler
    writes or ships it; add it to handlers, e.g. the console's and Prefect's API handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact_secrets(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        return True


class RedactedError(RuntimeError):
    """An error whose text held a secret, re-raised with the secret masked; `transient` keeps
    the original's retry decision."""

    def __init__(self, text: str, transient: bool = False) -> None:
        super().__init__(text, transient)
        self.text = text
        self.transient = transient

    def __str__(self) -> str:
        return self.text
