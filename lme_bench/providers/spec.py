"""A model as "provider:model" names it, with its role and its provider's settings."""

from __future__ import annotations

from dataclasses import dataclass

from lme_bench.config.settings import ProviderSettings


@dataclass(frozen=True, slots=True)
class ModelSpec:
    role: str
    provider: str
    model: str
    kind: str
    provider_settings: ProviderSettings

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"
