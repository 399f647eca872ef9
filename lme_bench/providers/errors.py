"""Provider errors the harness understands, whatever SDK raised them."""

from __future__ import annotations

from typing import Literal

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
