"""OpenAI (`openai:<model>`, OPENAI_API_KEY, OPENAI_BASE_URL honoured) and the servers that speak
its API (`[providers.<name>]` with a base_url: vLLM, Ollama, llama.cpp, LM Studio, gateways)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import SecretStr

from lme_bench.config.settings import ModelsSettings
from lme_bench.providers import judge_shapes
from lme_bench.providers.fault_types import Fault, retry_after
from lme_bench.providers.kinds.base import BodyApi, Provider

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from lme_bench.providers.batch_jobs.protocol import BatchJobApi
    from lme_bench.providers.judge_shapes import RequestShape
    from lme_bench.providers.spec import ModelSpec

DEFAULT_ENDPOINT = "https://api.openai.com/v1"


class OpenAI(Provider):
    kind = "openai"
    title = "OpenAI"
    sdk = "langchain_openai"
    key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    judge_batch = True
    answer_batch = True

    def base_url(self, spec: ModelSpec) -> str | None:
        """OpenAI's own honours OPENAI_BASE_URL."""
        return spec.provider_settings.base_url or os.environ.get("OPENAI_BASE_URL")

    def endpoint(self, spec: ModelSpec) -> str | None:
        return self.base_url(spec) or DEFAULT_ENDPOINT

    def classify_fault(self, error: BaseException) -> Fault:
        return classify_openai(error)

    def build(
        self, spec: ModelSpec, models: ModelsSettings, max_tokens: int, common: dict[str, Any]
    ) -> BaseChatModel:
        from langchain_openai import ChatOpenAI

        from lme_bench.providers.http_clients import model_http_client

        key = self.api_key(spec) or "not-needed"
        base_url = self.base_url(spec)
        if models.seed is not None:
            common["seed"] = models.seed
        return ChatOpenAI(
            model=spec.model,
            api_key=SecretStr(key),
            base_url=base_url,
            timeout=models.timeout_s,
            max_retries=0,
            http_async_client=model_http_client(base_url),  # safe on every event loop
            **self.cap_fields(common),
        )

    def cap_fields(self, common: dict[str, Any]) -> dict[str, Any]:
        return common

    def chat_request(self, spec: ModelSpec, call: Any) -> tuple[str, dict[str, Any]]:
        """The payload LangChain's model builds for a call (its own builder, the one its calls
        use), with `extra_body` merged in as the `openai` SDK sends it."""
        from langchain_core.messages import HumanMessage

        payload = dict(call._get_request_payload([HumanMessage("")]))
        payload.pop("messages", None)
        payload |= payload.pop("extra_body", None) or {}
        return "POST /chat/completions", payload

    def judge_shape(self, model: str) -> RequestShape:
        if judge_shapes.is_openai_reasoning(model):
            return judge_shapes.openai_reasoning_shape(model)
        return judge_shapes.OFFICIAL

    def judge_api(self, spec: ModelSpec, timeout_s: float) -> BodyApi:
        """The official judge's body through the `openai` SDK itself (LangChain's model sends
        other fields)."""
        from lme_bench.providers.openai_chat import OpenAIChatCompletions

        return OpenAIChatCompletions(
            self.api_key(spec) or "not-needed", self.base_url(spec), timeout_s
        )

    def batch_job_api(self, spec: ModelSpec, timeout_s: float) -> BatchJobApi:
        from lme_bench.providers.batch_jobs.clients import openai_batch_job_client

        key = self.api_key(spec) or "not-needed"
        return openai_batch_job_client(key, self.base_url(spec), timeout_s)


class OpenAICompatible(OpenAI):
    kind = "openai-compatible"
    title = "OpenAI-compatible"
    built_in = False  # needs [providers.<name>] with its base_url
    key_env = None  # a key only when api_key_env names one

    def base_url(self, spec: ModelSpec) -> str | None:
        return spec.provider_settings.base_url

    def own_problems(self, spec: ModelSpec, where: str) -> list[str]:
        found = []
        if not spec.provider_settings.base_url:
            found.append(f"{where}: set [providers.{spec.provider}] base_url")
        key_env = spec.provider_settings.api_key_env
        if key_env and not os.environ.get(key_env):
            found.append(f"{where}: set {key_env} in the environment")
        return found

    def cap_fields(self, common: dict[str, Any]) -> dict[str, Any]:
        # LangChain sends the cap as OpenAI's newer `max_completion_tokens`, which servers such
        # as llama.cpp's ignore (they then generate until the context is full); every
        # OpenAI-compatible server reads `max_tokens`.
        common["extra_body"] = {"max_tokens": common.pop("max_tokens")}
        return common


def classify_openai(error: BaseException) -> Fault:
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return None, None
    if isinstance(error, openai.RateLimitError):
        return "throttled", retry_after(error.response.headers)
    if isinstance(error, openai.APITimeoutError):  # a subclass of APIConnectionError
        return "timeout", None
    if isinstance(error, openai.APIConnectionError):
        return "connection", None
    if isinstance(error, openai.APIStatusError) and error.status_code >= 500:
        return "server", retry_after(error.response.headers)
    return None, None
