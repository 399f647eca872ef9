"""The judge request of the official evaluation, sent with the `openai` SDK itself.

The official script sends exactly `model`, `messages` (one user message), `n=1`, `temperature=0`
and `max_tokens=10`. LangChain's OpenAI model sends other fields (`max_completion_tokens`,
`stream`, `temperature` as 0.0, no `n`), so OpenAI and OpenAI-compatible judges call the SDK
directly with that body, or for an OpenAI reasoning model the nearest body it accepts
(lme_bench.judge.request_shapes). The reply comes back as an AIMessage with its token usage, so
retries, provider limits and accounting (lme_bench.providers.calls) treat it like any other model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from lme_bench.judge.request_shapes import MAX_TOKENS, OFFICIAL, RequestShape, request_shape
from lme_bench.providers.kinds.base import BodyApi

__all__ = [
    "MAX_TOKENS",
    "OfficialJudgeRequest",
    "ShapedJudgeRequest",
    "official_body",
    "one_prompt",
]


def official_body(model: str, prompt: str) -> dict[str, Any]:
    return OFFICIAL.body(model, prompt)


def one_prompt(messages: Sequence[BaseMessage]) -> str:
    """The text of the judge's one user message."""
    (message,) = messages
    if not isinstance(message, HumanMessage) or not isinstance(message.content, str):
        raise TypeError("the judge request is one user message of text")
    return message.content


class ShapedJudgeRequest:
    """Sends one user message as `request_shape`'s body to `api` (a provider kind's judge
    endpoint, `Provider.judge_api`)."""

    def __init__(self, model: str, shape: RequestShape, api: BodyApi) -> None:
        self.model = model
        self.request_shape = shape
        self._api = api

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        return await self._api.create(self.request_shape.body(self.model, one_prompt(messages)))


class OfficialJudgeRequest(ShapedJudgeRequest):
    """Sends one user message as the official judge request, or the body `shape` gives (by
    default the one for this model on OpenAI), over the `openai` SDK
    (lme_bench.providers.openai_chat)."""

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str | None,
        timeout_s: float,
        shape: RequestShape | None = None,
    ) -> None:
        from lme_bench.providers.openai_chat import OpenAIChatCompletions

        api = OpenAIChatCompletions(api_key, base_url, timeout_s)
        super().__init__(model, shape or request_shape("openai", model), api)
