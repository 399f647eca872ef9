"""The judge request of the official evaluation, sent with the `openai` SDK itself.

The official script sends exactly `model`, `messages` (one user message), `n=1`, `temperature=0`
and `max_tokens=10`. LangChain's OpenAI model sends other fields (`max_completion_tokens`,
`stream`, `temperature` as 0.0, no `n`), so OpenAI and OpenAI-compatible judges call the SDK
directly with that body. The reply comes back as an AIMessage with its token usage, so retries,
provider limits and accounting (lme_bench.providers.calls) treat it like any other model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

MAX_TOKENS = 10


def official_body(model: str, prompt: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "n": 1,
        "temperature": 0,
        "max_tokens": MAX_TOKENS,
    }


class OfficialJudgeRequest:
    """Sends one user message as the official judge request (no SDK retries: ours retry),
    over the process's loop-safe HTTP client (lme_bench.providers.http_clients), which is shared
    and so never closed here."""

    def __init__(self, model: str, api_key: str, base_url: str | None, timeout_s: float) -> None:
        from openai import AsyncOpenAI

        from lme_bench.providers.http_clients import model_http_client

        self.model = model
        self._client = AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=model_http_client(base_url),
        )

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        (message,) = messages
        if not isinstance(message, HumanMessage) or not isinstance(message.content, str):
            raise TypeError("the official judge request is one user message of text")
        completion = await self._client.chat.completions.create(
            **official_body(self.model, message.content)
        )
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
