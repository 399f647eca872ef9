"""The judge's model call for each provider kind, sending the body its family takes
(lme_bench.judge.request_shapes). Every judge request object has a `request_shape`, the shape
it sends, and answers one user message with an AIMessage carrying token usage, so retries,
limits and accounting (lme_bench.providers.calls) treat all of them alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.config.settings import Settings
from lme_bench.judge.official_request import OfficialJudgeRequest, one_prompt
from lme_bench.judge.request_shapes import RequestShape, request_shape
from lme_bench.providers.calls import ChatCall
from lme_bench.providers.errors import ProviderConfigError
from lme_bench.providers.factory import (
    ModelSpec,
    api_key,
    build_chat_model,
    caller,
    openai_base_url,
    parse_model,
)
from lme_bench.providers.named_errors import CallerNamed


class JudgeRequest(Protocol):
    """A judge's model call and the shape of the request body it sends."""

    request_shape: RequestShape

    async def ainvoke(self, messages: Sequence[BaseMessage], /) -> AIMessage: ...


class AnthropicJudgeRequest:
    """The judge request on Anthropic's Messages API."""

    def __init__(self, model: str, api_key: str, base_url: str | None, timeout_s: float) -> None:
        from lme_bench.providers.anthropic_messages import AnthropicMessages

        self.model = model
        self.request_shape = request_shape("anthropic", model)
        self._api = AnthropicMessages(api_key, base_url, timeout_s)

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        return await self._api.create(self.request_shape.body(self.model, one_prompt(messages)))


class ChatModelJudgeRequest:
    """A LangChain chat model (Bedrock Converse, the fake) built with the shape's cap and
    temperature, which it sends in its provider's own fields."""

    def __init__(self, model: ChatCall, shape: RequestShape) -> None:
        self.model = model
        self.request_shape = shape

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> Any:
        return await self.model.ainvoke(list(messages))


def _cap_and_temperature(shape: RequestShape) -> tuple[int, float]:
    if shape.layout == "converse":
        config = shape.field_value("inferenceConfig")
        return int(config["maxTokens"]), float(config["temperature"])
    return int(shape.field_value("max_tokens")), float(shape.field_value("temperature"))


class NamedJudgeRequest(CallerNamed):
    """A judge request made without LangChain whose errors name the judge, its model and its
    endpoint."""

    def __init__(self, request: JudgeRequest, spec: ModelSpec) -> None:
        super().__init__(request, caller(spec))
        self.request_shape = request.request_shape


def judge_request(spec: ModelSpec, settings: Settings) -> JudgeRequest:
    """The judge's model call for `spec`, sending its family's request shape."""
    shape = request_shape(spec.kind, spec.model)
    timeout_s = settings.models.timeout_s
    if spec.kind in ("openai", "openai-compatible"):
        key = api_key(spec) or "not-needed"
        official = OfficialJudgeRequest(spec.model, key, openai_base_url(spec), timeout_s, shape)
        return NamedJudgeRequest(official, spec)
    if spec.kind == "anthropic":
        anthropic_key = api_key(spec)
        if not anthropic_key:
            raise ProviderConfigError(f"[models] {spec.role} = '{spec.label}': no API key set")
        base_url = spec.provider_settings.base_url
        anthropic = AnthropicJudgeRequest(spec.model, anthropic_key, base_url, timeout_s)
        return NamedJudgeRequest(anthropic, spec)
    cap, temperature = _cap_and_temperature(shape)
    models = settings.models.model_copy(update={"temperature": temperature})
    return ChatModelJudgeRequest(build_chat_model(spec, models, cap), shape)


def judge_request_shapes(settings: Settings) -> dict[str, dict[str, Any]]:
    """For the run manifest: each LLM judge's request shape ("provider:model" -> its record:
    family, endpoint, body with the prompt left out; no key, no URL)."""
    shapes = {}
    for text in (settings.models.judge, settings.judge.second_model):
        if text:
            spec = parse_model("judge", text, settings)
            shapes[spec.label] = request_shape(spec.kind, spec.model).record(spec.model)
    return shapes
