"""Anthropic's Messages API (`anthropic:<model>`, ANTHROPIC_API_KEY; a [providers] name of kind
"anthropic" may set base_url), for judges only: their requests are sent without LangChain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lme_bench.config.settings import ModelsSettings
from lme_bench.providers.errors import ProviderConfigError
from lme_bench.providers.judge_shapes import MAX_TOKENS, RequestShape
from lme_bench.providers.kinds.base import BodyApi, Provider

if TYPE_CHECKING:
    from lme_bench.providers.anthropic_messages import AnthropicMessages
    from lme_bench.providers.batch_jobs.protocol import BatchJobApi
    from lme_bench.providers.spec import ModelSpec

DEFAULT_ENDPOINT = "https://api.anthropic.com"


class Anthropic(Provider):
    kind = "anthropic"
    title = "Anthropic"
    key_env = "ANTHROPIC_API_KEY"
    judge_only = True
    judge_batch = True

    def endpoint(self, spec: ModelSpec) -> str | None:
        return self.base_url(spec) or DEFAULT_ENDPOINT

    def judge_shape(self, model: str) -> RequestShape:
        return RequestShape(
            "anthropic-messages",
            "POST /v1/messages",
            {"temperature": 0, "max_tokens": MAX_TOKENS},
            differs="Anthropic Messages API: no n (it rejects unknown fields, answers once)",
        )

    def _messages(self, spec: ModelSpec, timeout_s: float) -> AnthropicMessages:
        from lme_bench.providers.anthropic_messages import AnthropicMessages

        key = self.api_key(spec)
        if not key:
            raise ProviderConfigError(f"[models] {spec.role} = '{spec.label}': no API key set")
        return AnthropicMessages(key, self.base_url(spec), timeout_s)

    def judge_api(self, spec: ModelSpec, timeout_s: float) -> BodyApi:
        return self._messages(spec, timeout_s)

    def chat_call(self, spec: ModelSpec, models: ModelsSettings, max_tokens: int) -> Any:
        """The Messages API with the system text apart, as it takes it; its errors name the
        judge, model and endpoint."""
        from lme_bench.providers.anthropic_chat import AnthropicChat
        from lme_bench.providers.named_errors import CallerNamed

        api = self._messages(spec, models.timeout_s)
        chat = AnthropicChat(spec.model, api, max_tokens, temperature=models.temperature or 0.0)
        return CallerNamed(chat, self.caller(spec))

    def chat_request(self, spec: ModelSpec, call: Any) -> tuple[str, dict[str, Any]]:
        """The Messages API body `call` (this kind's `chat_call`) sends, its turns and system
        text left out."""
        return "POST /v1/messages", call.request_fields()

    def batch_job_api(self, spec: ModelSpec, timeout_s: float) -> BatchJobApi:
        from lme_bench.providers.batch_jobs.clients import anthropic_batch_job_client

        return anthropic_batch_job_client(self.api_key(spec) or "", self.base_url(spec), timeout_s)
