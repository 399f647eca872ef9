"""One place every model call goes through: retries, the provider's limits, and an account of
calls, tokens, time. Each attempt (retries included) takes a limiter slot, since the provider
sees every attempt; no slot is held while waiting out a retry's backoff."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.common.limits import Limiter, limited
from lme_bench.providers.faults import classify
from lme_bench.providers.retry import (
    RetryCount,
    RetryPolicy,
    call_with_retry,
    retries_text,
    retry_totals,
    set_retry_columns,
)


class ChatCall(Protocol):
    """A chat model, one with tools bound, or any client answering messages with an AIMessage."""

    def ainvoke(self, messages: Any, /) -> Awaitable[Any]: ...


# Row columns of every table that accounts model calls, besides the retries: replies the
# output cap cut short, and attempts that timed out (retried or not).
CALL_COLUMNS = ("capped_replies", "timeouts")


def was_capped(message: AIMessage) -> bool:
    """Whether the provider stopped the reply at its output cap (OpenAI-style finish_reason
    'length', Bedrock's stopReason 'max_tokens', Anthropic's stop_reason 'max_tokens')."""
    metadata = message.response_metadata or {}
    return (
        metadata.get("finish_reason") == "length"
        or metadata.get("stopReason") == "max_tokens"
        or metadata.get("stop_reason") == "max_tokens"
    )


@dataclass
class CallAccount:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    retries: RetryCount = field(default_factory=RetryCount)
    capped_replies: int = 0
    timeouts: int = 0

    def add(self, message: AIMessage, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds
        self.capped_replies += was_capped(message)
        usage: dict[str, Any] = dict(message.usage_metadata or {})
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))

    def failed(self, error: BaseException) -> None:
        """An attempt failed with `error` (it may still be retried)."""
        self.timeouts += classify(error)[0] == "timeout"


def call_totals(rows: Iterable[object]) -> dict[str, int]:
    """RETRY_COLUMNS and CALL_COLUMNS summed over rows that carry them."""
    rows = list(rows)
    totals = retry_totals(rows)
    for column in CALL_COLUMNS:
        totals[column] = sum(int(getattr(row, column)) for row in rows)
    return totals


def calls_text(totals: Mapping[str, Any]) -> str:
    """Retries, capped replies and timeouts in words, from `call_totals`."""
    return (
        f"{retries_text(totals)}, {totals.get('capped_replies', 0)} replies cut by the output"
        f" cap, {totals.get('timeouts', 0)} timed-out attempts"
    )


def set_call_columns(row: object, account: CallAccount) -> None:
    """Copy the account's retries, capped replies and timeouts into a row's columns."""
    set_retry_columns(row, account.retries)
    for column in CALL_COLUMNS:
        setattr(row, column, getattr(account, column))


class CountedModel:
    """A chat model (or one with tools bound) called with retries within the provider's limits
    (`limiter`, see lme_bench.common.limits.provider_limiter), every call accounted."""

    def __init__(
        self,
        model: ChatCall,
        policy: RetryPolicy | None = None,
        account: CallAccount | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        self.model = model
        self.policy = policy or RetryPolicy()
        self.account = account or CallAccount()
        self.limiter = limiter

    async def _attempt(self, messages: list[BaseMessage]) -> Any:
        try:
            async with limited(self.limiter):
                return await self.model.ainvoke(messages)
        except Exception as error:
            self.account.failed(error)
            raise

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        started = time.perf_counter()
        reply = await call_with_retry(
            lambda: self._attempt(list(messages)), self.policy, count=self.account.retries
        )
        if not isinstance(reply, AIMessage):
            raise TypeError(f"expected an AIMessage from the model, got {type(reply).__name__}")
        self.account.add(reply, time.perf_counter() - started)
        return reply


def text_of(message: AIMessage) -> str:
    """The reply's text, whatever block format the provider used."""
    content = message.content
    if isinstance(content, str):
        return content.strip()
    parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in content]
    return "".join(parts).strip()
