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
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import SecretStr

from lme_bench.config.settings import ModelsSettings, ProviderSettings, Settings
from lme_bench.providers.errors import ModelCaller, ProviderConfigError
from lme_bench.providers.retry import RetryPolicy

if TYPE_CHECKING:  # LangChain is imported only when a model is built (a raw run needs none)
    from langchain_core.language_models import BaseChatModel

ProviderKind = Literal["openai", "openai-compatible", "anthropic", "bedrock", "fake"]
BUILT_IN: dict[str, ProviderKind] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "bedrock": "bedrock",
    "fake": "fake",
}
_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
# Kinds whose models only the judge can use (its request is sent without LangChain).
JUDGE_ONLY = ("anthropic",)
_SDK = {
    "openai": "langchain_openai",
    "openai-compatible": "langchain_openai",
    "bedrock": "langchain_aws",
}


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
    env = spec.provider_settings.api_key_env or _KEY_ENV.get(spec.kind)
    return os.environ.get(env) if env else None


def openai_base_url(spec: ModelSpec) -> str | None:
    """An OpenAI-compatible provider's base URL; OpenAI's own honours OPENAI_BASE_URL."""
    if spec.provider_settings.base_url:
        return spec.provider_settings.base_url
    return os.environ.get("OPENAI_BASE_URL") if spec.kind == "openai" else None


_DEFAULT_ENDPOINTS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}


def endpoint(spec: ModelSpec) -> str | None:
    """Where the model's requests go (None for the fakes, which have no server)."""
    if spec.kind in ("openai", "openai-compatible"):
        return openai_base_url(spec) or _DEFAULT_ENDPOINTS["openai"]
    if spec.kind == "anthropic":
        return spec.provider_settings.base_url or _DEFAULT_ENDPOINTS["anthropic"]
    if spec.kind == "bedrock":
        region = spec.provider_settings.region or os.environ.get("AWS_REGION")
        return spec.provider_settings.base_url or f"bedrock-runtime ({region or 'AWS default'})"
    return None


def caller(spec: ModelSpec) -> ModelCaller:
    """Who calls the model where, as its errors name them."""
    return ModelCaller(spec.role, spec.label, endpoint(spec))


def problems(spec: ModelSpec) -> list[str]:
    """What stops this model from being used, each with what to do about it."""
    found = []
    where = f"[models] {spec.role} = '{spec.label}'"
    sdk = _SDK.get(spec.kind)
    if sdk and importlib.util.find_spec(sdk) is None:
        found.append(
            f"{where}: the {sdk} package is not installed (pip install {sdk.replace('_', '-')})"
        )
    if spec.kind in _KEY_ENV and not api_key(spec):
        env = spec.provider_settings.api_key_env or _KEY_ENV[spec.kind]
        found.append(f"{where}: set {env} in the environment")
    if spec.kind in JUDGE_ONLY and spec.role != "judge":
        found.append(
            f"{where}: a {spec.kind} model can only judge; for this role use it through "
            "Bedrock (bedrock:anthropic.…) or an OpenAI-compatible gateway"
        )
    if spec.kind == "openai-compatible":
        if not spec.provider_settings.base_url:
            found.append(f"{where}: set [providers.{spec.provider}] base_url")
        key_env = spec.provider_settings.api_key_env
        if key_env and not os.environ.get(key_env):
            found.append(f"{where}: set {key_env} in the environment")
    if spec.kind == "bedrock" and not problems_free_bedrock(spec):
        found.append(
            f"{where}: no AWS credentials found (set AWS_PROFILE or AWS_ACCESS_KEY_ID/"
            "AWS_SECRET_ACCESS_KEY, or run on a role) and a region ([providers.bedrock] region "
            "or AWS_REGION)"
        )
    return found


def problems_free_bedrock(spec: ModelSpec) -> bool:
    if importlib.util.find_spec("boto3") is None:
        return True  # reported as a missing SDK already
    import boto3

    session = boto3.Session(region_name=spec.provider_settings.region)
    return session.get_credentials() is not None and session.region_name is not None


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
    """Longer waits on Bedrock throttling (its quotas refill slowly), ours elsewhere."""
    if spec.kind == "bedrock":
        return RetryPolicy(
            attempts=models.retry_attempts, throttle_base_s=5.0, throttle_cap_s=600.0
        )
    return RetryPolicy(attempts=models.retry_attempts)


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
    from lme_bench.providers.fake import ScriptedChatModel
    from lme_bench.providers.fake_policies import fake_policy, policy_names

    if max_tokens is None:
        raise ProviderConfigError(f"[models] {spec.role}: every request needs an output cap")
    common: dict[str, Any] = {"max_tokens": max_tokens}
    if models.temperature is not None:
        common["temperature"] = models.temperature
    if spec.kind == "fake":
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
    if spec.kind in ("openai", "openai-compatible"):
        from langchain_openai import ChatOpenAI

        from lme_bench.providers.http_clients import model_http_client

        key = api_key(spec) or "not-needed"
        base_url = openai_base_url(spec)
        if models.seed is not None:
            common["seed"] = models.seed
        if spec.kind == "openai-compatible":
            # LangChain sends the cap as OpenAI's newer `max_completion_tokens`, which servers
            # such as llama.cpp's ignore (they then generate until the context is full); every
            # OpenAI-compatible server reads `max_tokens`.
            common["extra_body"] = {"max_tokens": common.pop("max_tokens")}
        return ChatOpenAI(
            model=spec.model,
            api_key=SecretStr(key),
            base_url=base_url,
            timeout=models.timeout_s,
            max_retries=0,
            http_async_client=model_http_client(base_url),  # safe on every event loop
            **common,
        )
    if spec.kind == "bedrock":
        from lme_bench.providers.bedrock import bedrock_chat_model

        settings = spec.provider_settings
        return bedrock_chat_model(
            spec.model, settings.region, settings.base_url, models.timeout_s, **common
        )
    raise ProviderConfigError(f"[models] {spec.role}: unsupported provider kind {spec.kind!r}")
