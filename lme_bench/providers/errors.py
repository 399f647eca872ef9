"""Provider errors the harness understands, whatever SDK raised them, and the words that name
who called which model where in a failed call's error.

A failed model call's error names the role (agent, reader, judge, memory), the model and the
endpoint, never the key: `OpenAIConnectionError: Connection error.` becomes
`OpenAIConnectionError: Connection error. (reader local:tiny at http://127.0.0.1:18099/v1)`.
The error keeps its type, so retries and failure handling treat it as before; the words go into
its message (its first argument, when that is what it prints; else a note), which every error
text is made from (added by lme_bench.providers.named_errors on each model built).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from lme_bench.config.settings import ConfigError


class ProviderConfigError(ConfigError):
    """A model that cannot be used as configured (unknown provider, missing key or SDK)."""


class ProviderThrottled(RuntimeError):
    """The provider asked us to slow down (HTTP 429, Bedrock ThrottlingException)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ProviderUnavailable(RuntimeError):
    """A transient provider fault, by cause: a server fault (5xx), a timeout, a dropped
    connection."""

    def __init__(
        self, message: str, cause: Literal["server", "timeout", "connection"] = "server"
    ) -> None:
        super().__init__(message)
        self.cause: Literal["server", "timeout", "connection"] = cause


ROLE_WORDS = {"agent": "agent", "qa": "reader", "judge": "judge", "memory": "memory"}
_NAMED = "lme_bench_model_named"


def without_credentials(url: str) -> str:
    """`url` without a user or password in it (a key some put there)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True, slots=True)
class ModelCaller:
    """Who calls which model where: `reader openai:gpt-4o at https://api.openai.com/v1`."""

    role: str  # a [models] role: agent | qa | judge | memory
    model: str  # provider:model
    endpoint: str | None = None  # None for models with no server (the fakes)

    def __str__(self) -> str:
        where = f" at {without_credentials(self.endpoint)}" if self.endpoint else ""
        return f"{ROLE_WORDS.get(self.role, self.role)} {self.model}{where}"


def name_the_caller(error: BaseException, caller: ModelCaller) -> None:
    """Add ` (<caller>)` to the error's message, once."""
    if getattr(error, _NAMED, False):
        return
    words = str(caller)
    args = error.args
    try:
        if args and isinstance(args[0], str) and str(error) == args[0]:
            error.args = (f"{args[0]} ({words})", *args[1:])
            if getattr(error, "message", None) == args[0]:  # the SDKs' own copy (openai)
                error.message = error.args[0]  # type: ignore[attr-defined]
        else:
            error.add_note(words)
        setattr(error, _NAMED, True)
    except (AttributeError, TypeError):  # an exception that takes no new attributes
        return
