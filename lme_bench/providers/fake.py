"""A scripted fake chat model shipped in the package: replays replies, records what it was sent.

Replies come from a script (AIMessages, strings, functions of the messages, or `ToolPolicy`
functions of the messages and the tools bound to the call), so tests can make it emit tool
calls. It can simulate latency, throttling and transient faults (a timeout, a dropped
connection, a server error), and it counts tokens roughly (whitespace words) so accounting
works without a tokenizer. Every call is counted in
`fake_stats.FAKE_CALLS` (calls in flight, the peak, the total).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable
from lme_bench.providers.fake_stats import FAKE_CALLS

Reply = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


@dataclass(frozen=True, slots=True)
class RecordedCall:
    messages: list[BaseMessage]
    tools: list[str]
    kwargs: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """A reply that also reads the tools bound to the call (their OpenAI-format specs).
    Called with the messages alone, it replies as with no tools bound."""

    reply: Callable[[list[BaseMessage], list[dict[str, Any]]], AIMessage]

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        return self.reply(messages, [])


def _words(text: Any) -> int:
    return len(str(text).split())


def echo_last_message(messages: list[BaseMessage]) -> AIMessage:
    """Default behaviour: answer with the last message's text."""
    return AIMessage(content=str(messages[-1].content) if messages else "")


class ScriptedChatModel(BaseChatModel):
    """Replays `script` in order (the last reply repeats once the script is used up)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_name: str = "scripted"
    script: list[Any] = Field(default_factory=lambda: [echo_last_message])
    latency_s: float = 0.0
    throttle_every: int = Field(default=0, description="every Nth call raises ProviderThrottled")
    throttle_retry_after_s: float | None = 0.0
    fault_every: int = Field(
        default=0, description="every Nth call (not throttled) raises ProviderUnavailable"
    )
    fault_cause: Literal["timeout", "connection", "server"] = "server"
    max_tokens: int | None = Field(
        default=None, description="a text reply longer than this many words is cut, as 'length'"
    )
    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)
    _attempts: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "lme-bench-scripted"

    @property
    def calls(self) -> list[RecordedCall]:
        with self._lock:
            return list(self._calls)

    @property
    def attempts(self) -> int:
        """Calls made, throttled and faulted ones included."""
        return self._attempts

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[Any, AIMessage]:
        specs = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=specs, tool_choice=tool_choice, **kwargs)

    def _next_reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        with self._lock:
            self._attempts += 1
            if self.throttle_every and self._attempts % self.throttle_every == 0:
                raise ProviderThrottled("fake model: throttled", self.throttle_retry_after_s)
            if self.fault_every and self._attempts % self.fault_every == 0:
                raise ProviderUnavailable(f"fake model: {self.fault_cause}", self.fault_cause)
            index = min(len(self._calls), len(self.script) - 1)
            specs: list[dict[str, Any]] = list(kwargs.get("tools") or [])
            tools = [t["function"]["name"] for t in specs]
            self._calls.append(RecordedCall(list(messages), tools, dict(kwargs)))
        reply = self.script[index]
        if isinstance(reply, ToolPolicy):
            reply = reply.reply(messages, specs)
        elif callable(reply):
            reply = reply(messages)
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))
        message = self._capped(message)
        usage = {
            "input_tokens": sum(_words(m.content) for m in messages),
            "output_tokens": _words(message.content) + 8 * len(message.tool_calls),
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        return message.model_copy(update={"usage_metadata": usage})

    def _capped(self, message: AIMessage) -> AIMessage:
        """The reply with its finish reason, a text reply cut at `max_tokens` words as a real
        server stops at the cap."""
        reason = "tool_calls" if message.tool_calls else "stop"
        update: dict[str, Any] = {}
        words = str(message.content).split()
        cap = self.max_tokens
        if cap is not None and isinstance(message.content, str) and len(words) > cap:
            update["content"] = " ".join(words[:cap])
            reason = "length"
        update["response_metadata"] = {**message.response_metadata, "finish_reason": reason}
        return message.model_copy(update=update)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with FAKE_CALLS.track():
            if self.latency_s:
                time.sleep(self.latency_s)
            message = self._next_reply(messages, kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with FAKE_CALLS.track():
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            message = self._next_reply(messages, kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])
