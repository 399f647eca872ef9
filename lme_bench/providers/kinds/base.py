"""What a provider kind is: one class holding all that differs between kinds (its checks, the
chat model it builds, its retry policy, the faults its SDK raises, the judge's request shape,
its batch API, how the estimate counts its tokens). Every hook has the common behaviour here;
a kind overrides what it does otherwise. The kinds are listed in lme_bench.providers.registry.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from lme_bench.config.settings import ModelsSettings
from lme_bench.providers.errors import ModelCaller, ProviderConfigError
from lme_bench.providers.retry_policy import RetryPolicy

if TYPE_CHECKING:  # LangChain is imported only when a model is built (a raw run needs none)
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage

    from lme_bench.providers.batch_jobs.protocol import BatchJobApi
    from lme_bench.providers.fault_types import Fault
    from lme_bench.providers.judge_shapes import RequestShape
    from lme_bench.providers.spec import ModelSpec


class BodyApi(Protocol):
    """An endpoint sent a request body as is, answering with an AIMessage."""

    async def create(self, body: dict[str, Any]) -> AIMessage: ...


class Provider:
    kind: ClassVar[str]  # as [providers.<name>] kind names it
    title: ClassVar[str]  # as messages name it
    built_in: ClassVar[bool] = True  # the kind's name is a provider name without [providers]
    sdk: ClassVar[str | None] = None  # the LangChain package its chat models need
    key_env: ClassVar[str | None] = None  # the API key's variable, unless api_key_env says
    judge_only: ClassVar[bool] = False  # its models can only judge (sent without LangChain)
    judge_batch: ClassVar[bool] = False  # `[judge] batch = true` can send its judge's requests
    answer_batch: ClassVar[bool] = False  # `[qa] batch = true` can send its reader's requests
    tokens_are_words: ClassVar[bool] = False  # the estimate counts whitespace words (the fakes)

    def api_key(self, spec: ModelSpec) -> str | None:
        env = spec.provider_settings.api_key_env or self.key_env
        return os.environ.get(env) if env else None

    def base_url(self, spec: ModelSpec) -> str | None:
        return spec.provider_settings.base_url

    def endpoint(self, spec: ModelSpec) -> str | None:
        """Where the model's requests go (None when there is no server)."""
        return None

    def caller(self, spec: ModelSpec) -> ModelCaller:
        """Who calls the model where, as its errors name them."""
        return ModelCaller(spec.role, spec.label, self.endpoint(spec))

    def problems(self, spec: ModelSpec) -> list[str]:
        """What stops this model from being used, each with what to do about it."""
        found = []
        where = f"[models] {spec.role} = '{spec.label}'"
        if self.sdk and importlib.util.find_spec(self.sdk) is None:
            found.append(
                f"{where}: the {self.sdk} package is not installed "
                f"(pip install {self.sdk.replace('_', '-')})"
            )
        if self.key_env and not self.api_key(spec):
            found.append(
                f"{where}: set {spec.provider_settings.api_key_env or self.key_env} "
                "in the environment"
            )
        if self.judge_only and spec.role != "judge":
            found.append(
                f"{where}: a {spec.kind} model can only judge; for this role use it through "
                "Bedrock (bedrock:anthropic.…) or an OpenAI-compatible gateway"
            )
        return found + self.own_problems(spec, where)

    def own_problems(self, spec: ModelSpec, where: str) -> list[str]:
        return []

    def retry_policy(self, models: ModelsSettings) -> RetryPolicy:
        return RetryPolicy(attempts=models.retry_attempts)

    def classify_fault(self, error: BaseException) -> Fault:
        """A fault its SDK raised: (cause, retry-after s), (None, None) when not one of its."""
        return None, None

    def build(
        self, spec: ModelSpec, models: ModelsSettings, max_tokens: int, common: dict[str, Any]
    ) -> BaseChatModel:
        """The LangChain chat model; `common` holds the cap and temperature to send."""
        raise ProviderConfigError(f"[models] {spec.role}: unsupported provider kind {spec.kind!r}")

    def chat_call(self, spec: ModelSpec, models: ModelsSettings, max_tokens: int) -> Any:
        """A judge's chat call with system text (BEAM's rubric judge) made without LangChain;
        None: the kind's chat model (lme_bench.providers.factory.build_chat_model)."""
        return None

    def chat_request(self, spec: ModelSpec, call: Any) -> tuple[str, dict[str, Any]]:
        """The endpoint and the body fields, the messages left out, that `call` sends: this
        kind's `chat_call`, else its chat model, as built (read from the call itself, so the
        record is what goes out)."""
        raise ValueError(f"chat request shape: unsupported provider kind {self.kind!r}")

    def judge_shape(self, model: str) -> RequestShape:
        raise ValueError(f"judge request shape: unsupported provider kind {self.kind!r}")

    def judge_api(self, spec: ModelSpec, timeout_s: float) -> BodyApi | None:
        """Where the judge's body is sent as is; None: through the chat model, built with the
        shape's cap and temperature."""
        return None

    def check_batch(self, spec: ModelSpec, where: str) -> None:
        """ConfigError (starting with `where`) when its batch jobs cannot take this model."""

    def batch_job_api(self, spec: ModelSpec, timeout_s: float) -> BatchJobApi:
        raise ProviderConfigError(f"{spec.label}: a {spec.kind!r} provider has no batch API here")

    def batch_body(self, shape: RequestShape, model: str, prompt: str) -> dict[str, Any]:
        """A judge request's body in a batch job: the body its own call sends."""
        body: dict[str, Any] = shape.body(model, prompt)
        return body
