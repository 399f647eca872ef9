"""The memory system's own model (`[models] memory`), through lme-bench's provider layer."""

from __future__ import annotations

from lme_bench.common.limits import provider_limiter
from lme_bench.config.settings import Settings
from lme_bench.providers.accounted_chat import AccountedChatModel
from lme_bench.providers.factory import caller, model_for


def memory_chat_model(settings: Settings) -> AccountedChatModel | None:
    """None when the config names no memory model."""
    if not settings.models.memory:
        return None
    inner, policy, spec = model_for("memory", settings)
    return AccountedChatModel(
        inner=inner,
        policy=policy,
        limiter=provider_limiter(settings, spec.provider),
        caller=caller(spec),
    )
