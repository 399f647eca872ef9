"""The scripted fake shipped in the package (`fake:<policy>`; a [providers] name of kind "fake"
may add latency_s per call): no server, no key, whitespace words for tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lme_bench.config.settings import ModelsSettings
from lme_bench.providers.errors import ProviderConfigError
from lme_bench.providers.judge_shapes import MAX_TOKENS, RequestShape
from lme_bench.providers.kinds.base import Provider

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from lme_bench.providers.spec import ModelSpec


class Fake(Provider):
    kind = "fake"
    title = "fake"
    tokens_are_words = True

    def build(
        self, spec: ModelSpec, models: ModelsSettings, max_tokens: int, common: dict[str, Any]
    ) -> BaseChatModel:
        from lme_bench.providers.fake import ScriptedChatModel
        from lme_bench.providers.fake_policies import fake_policy, policy_names

        policy = fake_policy(spec.model)
        if policy is None:
            known = ", ".join(policy_names())
            raise ProviderConfigError(
                f"[models] {spec.role}: unknown fake model {spec.model!r} ({known})"
            )
        return ScriptedChatModel(
            model_name=spec.model,
            script=[policy],
            latency_s=spec.provider_settings.latency_s,
            max_tokens=max_tokens,
        )

    def chat_request(self, spec: ModelSpec, call: Any) -> tuple[str, dict[str, Any]]:
        """Nothing is sent: the model and the cap the scripted model was built with."""
        return "in process (no request)", {"model": spec.model, "max_tokens": call.max_tokens}

    def judge_shape(self, model: str) -> RequestShape:
        return RequestShape(
            "fake",
            "in process (no request)",
            {"temperature": 0.0, "max_tokens": MAX_TOKENS},
            differs="the scripted fake model: nothing is sent",
        )
