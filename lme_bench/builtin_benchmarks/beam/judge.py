"""Scoring BEAM answers with an LLM judge, as BEAM's official evaluator does.

Each rubric item is one judge call (the official rubric prompt as one user message); event
ordering adds one equivalence call per (response line, unused rubric item) pair tried, in the
official order, to align the response to the reference order. All calls go through
`CountedModel` (retries, the provider's limits, an account of calls and tokens). The arithmetic
is beam.scoring's. The official evaluator also asks the model to break an
event-ordering response into facts and then discards the reply; that call does not change any
score and is not made here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from lme_bench.builtin_benchmarks.beam.models import BeamGold
from lme_bench.builtin_benchmarks.beam.prompts import BeamPrompts, Message
from lme_bench.builtin_benchmarks.beam.scoring import (
    EVENT_ORDERING,
    OrderingScore,
    QuestionScore,
    alignment,
    item_score,
    judge_score,
    ordering_score,
    parse_judge_reply,
    reported_score,
    response_lines,
    says_same_event,
)
from lme_bench.common.limits import Limiter
from lme_bench.common.secrets import redact_secrets
from lme_bench.providers.calls import CallAccount, ChatCall, CountedModel, text_of
from lme_bench.providers.retry import RetryPolicy


@dataclass(frozen=True, slots=True)
class ItemVerdict:
    rubric_item: str
    score: float | None  # as the official evaluator adds it; None: no usable score
    reply: str  # the judge's reply as it came


@dataclass
class BeamQuestionResult:
    question_id: str
    conversation_id: str
    ability: str
    status: str = "ok"  # "ok", or "error" when a call failed after its retries
    items: list[ItemVerdict] = field(default_factory=list)
    llm_judge_score: float | None = None
    ordering: OrderingScore | None = None
    reported: float | None = None  # what the per-ability average takes
    unreadable_items: int = 0
    account: CallAccount = field(default_factory=CallAccount)
    seconds: float = 0.0
    error: str | None = None

    def question_score(self) -> QuestionScore | None:
        """The row `aggregate` averages; None for a question whose judging failed."""
        if self.reported is None:
            return None
        return QuestionScore(self.conversation_id, self.ability, self.reported)


def _messages(messages: list[Message]) -> list[BaseMessage]:
    return [
        SystemMessage(text) if role == "system" else HumanMessage(text) for role, text in messages
    ]


class BeamJudge:
    def __init__(
        self,
        model: ChatCall,
        prompts: BeamPrompts,
        policy: RetryPolicy | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        self.model = model
        self.prompts = prompts
        self.policy = policy or RetryPolicy()
        self.limiter = limiter

    async def score(self, gold: BeamGold, response: str) -> BeamQuestionResult:
        """One question's official figures for `response`; a call failing after its retries
        gives a result with status "error" and no scores."""
        result = BeamQuestionResult(gold.question_id, gold.conversation_id, gold.ability)
        counted = CountedModel(self.model, self.policy, result.account, self.limiter)
        started = time.perf_counter()
        try:
            if gold.ability == EVENT_ORDERING:
                result.ordering = await self._ordering(counted, gold, response)
            for item in gold.rubric:
                prompt = self.prompts.rubric_prompt(item, response)
                reply = text_of(await counted.ainvoke([HumanMessage(prompt)]))
                score = item_score(parse_judge_reply(reply), gold.ability)
                result.items.append(ItemVerdict(item, score, reply))
        except Exception as exc:
            result.status = "error"
            result.error = redact_secrets(f"judge call failed: {type(exc).__name__}: {exc}")
        else:
            scores = [v.score for v in result.items]
            result.unreadable_items = sum(s is None for s in scores)
            result.llm_judge_score = judge_score(scores)
            result.reported = reported_score(gold.ability, result.llm_judge_score, result.ordering)
        result.seconds = time.perf_counter() - started
        return result

    async def _ordering(
        self, counted: CountedModel, gold: BeamGold, response: str
    ) -> OrderingScore:
        steps = alignment(gold.rubric, response_lines(response))
        try:
            item, line = next(steps)
            while True:
                reply = await counted.ainvoke(_messages(self.prompts.equivalence(item, line)))
                item, line = steps.send(says_same_event(text_of(reply)))
        except StopIteration as done:
            return ordering_score(gold.rubric, done.value)
