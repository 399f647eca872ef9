"""OpenAI's chat completions endpoint with a body given as is (no LangChain, which sends fields
of its own): the reply as an AIMessage with its token usage, so retries, limits and accounting
(lme_bench.providers.calls) treat it like any other model's. No SDK retries (ours retry); the
process's loop-safe HTTP client (lme_bench.providers.http_clients) is shared, so never closed
here.

The body goes out as the bytes the official evaluate_qa.py's client (openai 1.35 over httpx
0.27) sends for the same fields: `messages`, `model`, then the other fields in alphabetical
order (the order that SDK builds its body in), through `json.dumps` with its default separators
and ASCII escapes. So a judge request is byte for byte the official script's.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage

FIRST_FIELDS = ("messages", "model")


def wire_body(body: dict[str, Any]) -> bytes:
    """`body` encoded as the official script's client encodes it."""
    first = {k: body[k] for k in FIRST_FIELDS if k in body}
    rest = {k: body[k] for k in sorted(body) if k not in FIRST_FIELDS}
    return json.dumps(first | rest).encode()


class OpenAIChatCompletions:
    def __init__(self, api_key: str, base_url: str | None, timeout_s: float) -> None:
        from openai import AsyncOpenAI

        from lme_bench.providers.http_clients import model_http_client

        self._client = AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=model_http_client(base_url),
        )

    async def create(self, body: dict[str, Any]) -> AIMessage:
        from openai.types.chat import ChatCompletion

        completion = await self._client.post(
            "/chat/completions", content=wire_body(body), cast_to=ChatCompletion
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
