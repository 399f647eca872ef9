"""A LangChain chat model that sends every call through lme-bench's provider layer.

Memory systems that make their own model calls (mem0's extraction, LangMem's manager,
Graphiti's graph building) take a LangChain chat model. Given this one, their calls take a slot
of the provider's limiter, are retried by cause, and are counted in a `CallAccount`, exactly
like the memory agent's, QA's and the judge's.

Async calls run on the caller's event loop. A synchronous call (mem0 calls its model
synchronously) runs the same async path on the process's loop for synchronous calls
(lme_bench.providers.sync_bridge); the limiter's slots work across loops.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field

from lme_bench.common.limits import Limiter, limited
from lme_bench.providers.calls import CallAccount
from lme_bench.providers.errors import ModelCaller, name_the_caller
from lme_bench.providers.retry import RetryPolicy, call_with_retry
from lme_bench.providers.sync_bridge import run_sync


class AccountedChatModel(BaseChatModel):
    """`inner` called within `limiter`, retried by `policy`, every call added to `account`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    policy: RetryPolicy = Field(default_factory=RetryPolicy)
    account: CallAccount = Field(default_factory=CallAccount)
    limiter: Any = None  # a lme_bench.common.limits.Limiter, or None
    caller: ModelCaller | None = None  # named in the error of a failed call

    @property
    def _llm_type(self) -> str:
        return f"lme-bench-accounted-{self.inner._llm_type}"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        # The inner model formats tools for its provider; this model passes the result through.
        bound = self.inner.bind_tools(tools, **kwargs)
        return self.bind(**getattr(bound, "kwargs", {}))

    async def _attempt(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        limiter: Limiter | None = self.limiter
        try:
            async with limited(limiter):
                return await self.inner._agenerate(messages, **kwargs)
        except Exception as error:
            self.account.failed(error)
            if self.caller is not None:  # `inner`'s callbacks do not run: it is called directly
                name_the_caller(error, self.caller)
            raise

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if stop is not None:
            kwargs["stop"] = stop
        started = time.perf_counter()
        result = await call_with_retry(
            lambda: self._attempt(messages, kwargs), self.policy, count=self.account.retries
        )
        seconds = time.perf_counter() - started
        for generation in result.generations:
            message = generation.message
            if isinstance(message, AIMessage):
                self.account.add(message, seconds)
                seconds = 0.0
        return ChatResult(
            generations=[ChatGeneration(message=g.message) for g in result.generations],
            llm_output=result.llm_output,
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return run_sync(self._agenerate(messages, stop, **kwargs))
