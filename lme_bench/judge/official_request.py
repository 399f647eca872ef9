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

__all__ = ["MAX_TOKENS", "OfficialJudgeRequest", "official_body", "one_prompt"]


def official_body(model: str, prompt: str) -> dict[str, Any]:
    return OFFICIAL.body(model, prompt)


def one_prompt(messages: Sequence[BaseMessage]) -> str:
    """The text of the judge's one user message."""
    (message,) = messages
    if not isinstance(message, HumanMessage) or not isinstance(message.content, str):
        raise TypeError("the judge request is one user message of text")
    return message.content


class OfficialJudgeRequest:
    """Sends one user message as the official judge request, or the body `request_shape` gives
    (by default the one for this model on OpenAI), with no SDK retries (ours retry), over the
    process's loop-safe HTTP client (lme_bench.providers.http_clients), which is shared and so
    never closed here."""

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str | None,
        timeout_s: float,
        shape: RequestShape | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        from lme_bench.providers.http_clients import model_http_client

        self.model = model
        self.request_shape = shape or request_shape("openai", model)
        self._client = AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=model_http_client(base_url),
        )

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        body = self.request_shape.body(self.model, one_prompt(messages))
        completion = await self._client.chat.completions.create(**body)
        choice = completion.choices[0]
        usage = completion.usage
        tokens = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
        return AIMessage(
            content=choice.message.content or "",
            response_metadata={"finish_reason": choice.finish_reason},
            usage_metadata={
                "input_tokens": tokens[0],
                "output_tokens": tokens[1],
                "total_tokens": sum(tokens),
            },
        )
