"""Chat models from "provider:model" strings, checked before any work starts.

    openai:gpt-4o-2024-08-06        OpenAI (OPENAI_API_KEY; OPENAI_BASE_URL honoured)
    anthropic:claude-…              Anthropic's Messages API, judges only (ANTHROPIC_API_KEY;
                                    a [providers] name of kind "anthropic" may set base_url)
    bedrock:anthropic.claude-…      AWS Bedrock Converse (region from config, AWS default chain;
                                    a [providers] name of kind "bedrock" may set base_url, the
                                    runtime endpoint, e.g. a VPC endpoint)
    fake:echo                       the scripted fake shipped in the package (a [providers]
                                    name of kind "fake" may add latency_s per call)
    <name>:<model>                  a provider named in [providers.<name>], e.g. a local
                                    OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio)

SDKs are imported only when a model of theirs is built. Keys come from the environment only.
Each kind is one class in lme_bench.providers.kinds (lme_bench.providers.registry lists them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lme_bench.config.settings import ModelsSettings, ProviderSettings, Settings
from lme_bench.providers.errors import ModelCaller, ProviderConfigError
from lme_bench.providers.registry import BUILT_IN, provider_for
from lme_bench.providers.retry import RetryPolicy
from lme_bench.providers.spec import ModelSpec

__all__ = [
    "BUILT_IN",
    "ModelSpec",
    "api_key",
    "build_chat_model",
    "caller",
    "check_models",
    "endpoint",
    "model_for",
    "openai_base_url",
    "parse_model",
    "problems",
    "retry_policy",
]

if TYPE_CHECKING:  # LangChain is imported only when a model is built (a raw run needs none)
    from langchain_core.language_models import BaseChatModel


def parse_model(role: str, text: str, settings: Settings) -> ModelSpec:
    provider, sep, model = text.partition(":")
    if not sep or not provider or not model:
        raise ProviderConfigError(
            f"[models] {role} = {text!r}: expected 'provider:model', e.g. 'openai:gpt-4o'"
        )
    configured = settings.providers.get(provider)
    if configured is not None:
        return ModelSpec(role, provider, model, configured.kind, configured)
    if provider in BUILT_IN:
        kind = BUILT_IN[provider]
        return ModelSpec(role, provider, model, kind, ProviderSettings(kind=kind))
    known = ", ".join(sorted({*BUILT_IN, *settings.providers}))
    raise ProviderConfigError(
        f"[models] {role} = {text!r}: unknown provider {provider!r} (known: {known}; "
        f"add [providers.{provider}] with a base_url for an OpenAI-compatible server)"
    )


def api_key(spec: ModelSpec) -> str | None:
    return provider_for(spec.kind).api_key(spec)


def openai_base_url(spec: ModelSpec) -> str | None:
    """An OpenAI-compatible provider's base URL; OpenAI's own honours OPENAI_BASE_URL."""
    return provider_for(spec.kind).base_url(spec)


def endpoint(spec: ModelSpec) -> str | None:
    """Where the model's requests go (None for the fakes, which have no server)."""
    return provider_for(spec.kind).endpoint(spec)


def caller(spec: ModelSpec) -> ModelCaller:
    """Who calls the model where, as its errors name them."""
    return provider_for(spec.kind).caller(spec)


def problems(spec: ModelSpec) -> list[str]:
    """What stops this model from being used, each with what to do about it."""
    return provider_for(spec.kind).problems(spec)


def check_models(
    settings: Settings, roles: tuple[str, ...] = ("agent", "qa", "judge")
) -> list[ModelSpec]:
    """Parse and check every configured role; one error listing every problem, or the specs."""
    specs, found = [], []
    for role in roles:
        text = getattr(settings.models, role)
        if not text:
            continue
        try:
            spec = parse_model(role, text, settings)
        except ProviderConfigError as exc:
            found.append(str(exc))
            continue
        specs.append(spec)
        found += problems(spec)
    if found:
        raise ProviderConfigError("model check failed:\n  " + "\n  ".join(found))
    return specs


def retry_policy(spec: ModelSpec, models: ModelsSettings) -> RetryPolicy:
    """The retry policy of the model's provider kind (longer waits on Bedrock throttling)."""
    return provider_for(spec.kind).retry_policy(models)


def model_for(role: str, settings: Settings) -> tuple[BaseChatModel, RetryPolicy, ModelSpec]:
    """Check and build the model of one role (errors before any work starts)."""
    (spec,) = check_models(settings, roles=(role,)) or (None,)
    if spec is None:
        raise ProviderConfigError(f"[models] {role} is not set, and this run needs it")
    model = build_chat_model(spec, settings.models, settings.models.max_tokens.for_role(role))
    return model, retry_policy(spec, settings.models), spec


def build_chat_model(
    spec: ModelSpec, models: ModelsSettings, max_tokens: int | None
) -> BaseChatModel:
    """The LangChain chat model for `spec`, every request capped at `max_tokens` output tokens;
    the SDK's own retries are off (ours handle them); its errors name the role, the model and
    the endpoint (lme_bench.providers.named_errors)."""
    from lme_bench.providers.named_errors import NameTheCaller

    model = _chat_model(spec, models, max_tokens)
    model.callbacks = [*(model.callbacks or []), NameTheCaller(caller(spec))]  # type: ignore[misc]
    return model


def _chat_model(spec: ModelSpec, models: ModelsSettings, max_tokens: int | None) -> BaseChatModel:
    if max_tokens is None:
        raise ProviderConfigError(f"[models] {spec.role}: every request needs an output cap")
    common: dict[str, Any] = {"max_tokens": max_tokens}
    if models.temperature is not None:
        common["temperature"] = models.temperature
    return provider_for(spec.kind).build(spec, models, max_tokens, common)
