"""The memory system's own model (`[models] memory`), through lme-bench's provider layer."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from lme_bench.common.limits import Limiter, provider_limiter
from lme_bench.config.settings import Settings
from lme_bench.providers.accounted_chat import AccountedChatModel
from lme_bench.providers.errors import ModelCaller
from lme_bench.providers.factory import caller, model_for
from lme_bench.providers.retry import RetryPolicy


@dataclass(frozen=True)
class MemoryModel:
    """The `[models] memory` model, built once per run; each memory system gets its own
    accounted wrapper of it, so its calls are counted apart (for the system's `usage`)."""

    inner: BaseChatModel
    policy: RetryPolicy
    limiter: Limiter | None
    caller: ModelCaller | None

    def for_one_system(self) -> AccountedChatModel:
        return AccountedChatModel(
            inner=self.inner, policy=self.policy, limiter=self.limiter, caller=self.caller
        )


def memory_model(settings: Settings) -> MemoryModel | None:
    """None when the config names no memory model."""
    if not settings.models.memory:
        return None
    inner, policy, spec = model_for("memory", settings)
    return MemoryModel(inner, policy, provider_limiter(settings, spec.provider), caller(spec))


def memory_chat_model(settings: Settings) -> AccountedChatModel | None:
    """A wrapper of its own of a newly built memory model; None when the config names none."""
    model = memory_model(settings)
    return model.for_one_system() if model is not None else None
