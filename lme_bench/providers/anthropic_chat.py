"""A chat call on Anthropic's Messages API for callers that send system and user messages
(BEAM's judge): system messages become the request's `system` text, the others its turns, with
the caller's output cap and temperature. One request per call over AnthropicMessages (its
errors, retries and shared HTTP client)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from lme_bench.providers.anthropic_messages import AnthropicMessages


def _text(message: BaseMessage) -> str:
    if not isinstance(message.content, str):
        raise TypeError("Anthropic chat call: messages of text only")
    return message.content


def messages_body(
    model: str, messages: Sequence[BaseMessage], max_tokens: int, temperature: float
) -> dict[str, Any]:
    """The Messages API body for `messages`."""
    system = "\n\n".join(_text(m) for m in messages if isinstance(m, SystemMessage))
    turns = [
        {"role": "assistant" if isinstance(m, AIMessage) else "user", "content": _text(m)}
        for m in messages
        if not isinstance(m, SystemMessage)
    ]
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "temperature": temperature}
    if system:
        body["system"] = system
    body["messages"] = turns
    return body


class AnthropicChat:
    def __init__(
        self,
        model: str,
        api: AnthropicMessages,
        max_tokens: int,
        temperature: float,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._api = api

    def request_fields(self) -> dict[str, Any]:
        """The body's fields besides its turns and system text, as `ainvoke` sends them."""
        body = messages_body(self.model, [], self.max_tokens, self.temperature)
        del body["messages"]
        return body

    async def ainvoke(self, messages: Sequence[BaseMessage], /) -> AIMessage:
        body = messages_body(self.model, messages, self.max_tokens, self.temperature)
        return await self._api.create(body)
