"""The judge's model call for each provider kind, sending the body its family takes
(lme_bench.judge.request_shapes; each kind's hooks in lme_bench.providers.kinds). Every judge
request object has a `request_shape`, the shape it sends, and answers one user message with an
AIMessage carrying token usage, so retries, limits and accounting (lme_bench.providers.calls)
treat all of them alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.config.settings import Settings
from lme_bench.judge.official_request import ShapedJudgeRequest
from lme_bench.judge.request_shapes import RequestShape, request_shape
from lme_bench.providers.calls import ChatCall
from lme_bench.providers.factory import ModelSpec, build_chat_model, caller, parse_model
from lme_bench.providers.named_errors import CallerNamed
from lme_bench.providers.registry import provider_for


class JudgeRequest(Protocol):
    """A judge's model call and the shape of the request body it sends."""

    request_shape: RequestShape

    async def ainvoke(self, messages: Sequence[BaseMessage], /) -> AIMessage: ...


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
    """The judge's model call for `spec`, sending its family's request shape: as is where its
    provider kind has a judge endpoint (OpenAI's SDK, Anthropic's Messages API), else through
    the chat model built with the shape's cap and temperature."""
    provider = provider_for(spec.kind)
    shape = provider.judge_shape(spec.model)
    api = provider.judge_api(spec, settings.models.timeout_s)
    if api is not None:
        return NamedJudgeRequest(ShapedJudgeRequest(spec.model, shape, api), spec)
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


def own_judge_request_shapes(own: Any, settings: Settings) -> dict[str, dict[str, Any]] | None:
    """A benchmark's own judge's requests (its optional `request_shapes` hook,
    lme_bench.benchmarks.scoring_hooks.OwnJudge); None for a judge without the hook."""
    shapes = getattr(own, "request_shapes", None)
    if shapes is None:
        return None
    found: dict[str, dict[str, Any]] = shapes(settings)
    return found
