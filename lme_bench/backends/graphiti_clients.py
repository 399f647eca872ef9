"""Graphiti's model, embedder and reranker clients, backed by what lme-bench gives a backend.

- `ChatModelLLMClient`: Graphiti's structured-output requests sent to `env.chat_model`, the
  memory model behind lme-bench's provider layer (limits, retries by cause, accounting). Graphiti
  puts the JSON schema of the reply it wants into the prompt; the reply's JSON object is checked
  against that schema, and the model is asked again (with the error) when it does not fit.
- `CountingEmbedder`: the configured embedder (the packaged MiniLM by default), calls counted.
- `KeepOrderReranker`: Graphiti requires a cross-encoder object; the backend's search ranks by
  reciprocal rank fusion and never calls it, so this one makes no model call and keeps the order
  it is given.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from graphiti_core.cross_encoder.client import CrossEncoderClient
from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.llm_client.client import LLMClient
from graphiti_core.llm_client.config import DEFAULT_MAX_TOKENS, LLMConfig, ModelSize
from graphiti_core.prompts.models import Message
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class StructuredReplyError(ValueError):
    """The memory model's reply is not the JSON object Graphiti asked for."""


def chat_messages(messages: list[Message]) -> list[BaseMessage]:
    converted: list[BaseMessage] = []
    for message in messages:
        if message.role == "system":
            converted.append(SystemMessage(content=message.content))
        elif message.role == "assistant":
            converted.append(AIMessage(content=message.content))
        else:
            converted.append(HumanMessage(content=message.content))
    return converted


def reply_object(text: str, response_model: type[BaseModel] | None) -> dict[str, Any]:
    """The first JSON object in `text` (code fences allowed), checked against the schema."""
    stripped = _FENCE.sub("", text.strip())
    start = stripped.find("{")
    if start < 0:
        raise StructuredReplyError("the reply holds no JSON object")
    try:
        found, _ = json.JSONDecoder().raw_decode(stripped, start)
    except json.JSONDecodeError as error:
        raise StructuredReplyError(f"the reply is not valid JSON: {error}") from None
    if not isinstance(found, dict):
        raise StructuredReplyError("the reply's JSON is not an object")
    if response_model is None:
        return found
    try:
        return response_model.model_validate(found).model_dump()
    except ValidationError as error:
        raise StructuredReplyError(f"the reply does not fit the schema: {error}") from None


class ChatModelLLMClient(LLMClient):
    """Graphiti's LLM client over a LangChain chat model (lme-bench's accounted memory model)."""

    def __init__(self, chat_model: Any, *, json_retries: int = 1) -> None:
        super().__init__(LLMConfig(model="lme-bench-memory-model", temperature=0), cache=False)
        self.chat_model = chat_model
        self.json_retries = json_retries

    async def _generate_response_with_retry(  # type: ignore[override]  # tenacity-wrapped
        self,
        messages: list[Message],
        response_model: type[BaseModel] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_size: ModelSize = ModelSize.medium,
        *,
        model: str | None = None,
    ) -> dict[str, Any]:
        # The provider layer retries by cause already; Graphiti's own back-off waits 5-120 s.
        return await self._generate_response(messages, response_model, max_tokens, model_size)

    async def _generate_response(
        self,
        messages: list[Message],
        response_model: type[BaseModel] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_size: ModelSize = ModelSize.medium,
        *,
        model: str | None = None,
    ) -> dict[str, Any]:
        conversation = chat_messages(messages)
        for attempt in range(self.json_retries + 1):
            reply = await self.chat_model.ainvoke(conversation)
            text = reply.content if isinstance(reply.content, str) else str(reply.text)
            try:
                return reply_object(text, response_model)
            except StructuredReplyError as error:
                if attempt == self.json_retries:
                    raise
                conversation += [
                    AIMessage(content=text),
                    HumanMessage(content=f"{error}. Reply again with only the JSON object."),
                ]
        raise AssertionError("unreachable")


class CountingEmbedder(EmbedderClient):
    """Graphiti's embedder over an lme-bench embedder (`embed(texts)`), loaded at first use."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self._load = load
        self._model: Any = None
        self.calls = 0
        self.texts = 0

    async def create(
        self, input_data: str | list[str] | Iterable[int] | Iterable[Iterable[int]]
    ) -> list[float]:
        texts = [input_data] if isinstance(input_data, str) else [str(i) for i in input_data]
        return (await self.create_batch(texts[:1]))[0]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        if not input_data_list:
            return []
        if self._model is None:
            self._model = await asyncio.to_thread(self._load)
        self.calls += 1
        self.texts += len(input_data_list)
        vectors = await asyncio.to_thread(self._model.embed, list(input_data_list))
        return [[float(x) for x in vector] for vector in vectors]


class KeepOrderReranker(CrossEncoderClient):
    """No model call: passages keep the order given, scored 1, 1/2, 1/3, ..."""

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        return [(passage, 1.0 / (rank + 1)) for rank, passage in enumerate(passages)]
