"""Judging one hypothesis: the LLM judge (LongMemEval's per-type criteria, temperature 0,
10 output tokens, one user message) or the labelled no-LLM fallback; repeats and a second judge
are separate rows, never merged into one label here."""

from __future__ import annotations

import time

from langchain_core.messages import HumanMessage

from lme_bench.common.limits import Limiter
from lme_bench.common.secrets import redact_secrets
from lme_bench.judge.fallback import FALLBACK_JUDGE, fallback_verdict
from lme_bench.judge.prompts import JudgePrompt, PromptSet
from lme_bench.judge.verdict import read_verdict
from lme_bench.providers.calls import CallAccount, ChatCall, CountedModel, set_call_columns, text_of
from lme_bench.providers.retry import RetryPolicy
from lme_bench.results.qa_tables import ScoreRow


class LlmJudge:
    def __init__(
        self,
        name: str,
        model: ChatCall,
        prompts: PromptSet,
        policy: RetryPolicy,
        limiter: Limiter | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.prompts = prompts
        self.policy = policy
        self.limiter = limiter

    async def judge(
        self,
        *,
        question_id: str,
        question_type: str,
        is_abstention: bool,
        question: str,
        answer: str,
        hypothesis: str,
        repeat: int,
        prompt: JudgePrompt | None = None,
    ) -> ScoreRow:
        """A verdict by the official rule; a call that fails after its retries is a row with
        status "error" and no label (an infrastructure error: the question is redone).
        `prompt`: one of the set's, chosen by the caller (another benchmark's question), else
        the one the official script chooses for the question's type and id."""
        if prompt is None:
            prompt = self.prompts.for_question(question_id, question_type)
        account = CallAccount()
        counted = CountedModel(self.model, self.policy, account, self.limiter)
        started = time.perf_counter()
        label: bool | None = None
        readable: bool | None = None
        raw, status, error = "", "ok", None
        try:
            reply = text_of(
                await counted.ainvoke([HumanMessage(prompt.render(question, answer, hypothesis))])
            )
        except Exception as exc:
            status, error = (
                "error",
                redact_secrets(f"judge call failed: {type(exc).__name__}: {exc}"),
            )
        else:
            verdict = read_verdict(reply)
            label, readable, raw = verdict.label, verdict.readable, verdict.raw
        row = ScoreRow(
            question_id=question_id,
            question_type=question_type,
            is_abstention=is_abstention,
            judge=self.name,
            judge_kind="llm",
            repeat=repeat,
            prompt_version=self.prompts.version,
            prompt_name=prompt.name,
            prompt_sha256=prompt.sha256,
            label=label,
            readable=readable,
            raw_verdict=raw,
            status=status,
            attribution="",
            llm_calls=account.calls,
            input_tokens=account.input_tokens,
            output_tokens=account.output_tokens,
            seconds=time.perf_counter() - started,
            error=error,
        )
        set_call_columns(row, account)
        return row


def fallback_row(
    *,
    question_id: str,
    question_type: str,
    is_abstention: bool,
    answer: str,
    hypothesis: str,
    abstains: bool | None = None,
) -> ScoreRow:
    """`abstains`: whether the right response says the answer is not there (None: the
    official test, `_abs` in the id)."""
    verdict = fallback_verdict(question_id, question_type, answer, hypothesis, abstains)
    return ScoreRow(
        question_id=question_id,
        question_type=question_type,
        is_abstention=is_abstention,
        judge=FALLBACK_JUDGE,
        judge_kind="fallback",
        repeat=0,
        prompt_version="none",
        prompt_name="normalized-match",
        prompt_sha256="",
        label=verdict.label,
        readable=None,
        raw_verdict=verdict.raw,
        status=verdict.status,
        attribution="",
    )


def attribute(
    *,
    ingested: bool,
    answered: bool,
    evidence_in_context: bool | None,
    label: bool | None,
    readable: bool | None,
    status: str,
    memory_empty: bool = False,
    evidence_unknowable: bool = False,
) -> str:
    """Why a question scored as it did, from what the pipeline saw at each stage;
    `memory_empty`: its ingestion left the memory holding nothing to answer from;
    `evidence_unknowable`: the question has evidence turns, but what the reader saw maps to
    no turn (a context document of context-only ingestion), so whether it held them is unknown."""
    if not ingested:
        return "ingestion-failed"
    if not answered:
        return "answer-failed"
    if status != "ok" or label is None:
        return "judge-failed" if status == "error" else "not-gradable"
    if label:
        return "correct"
    if readable is False:
        return "judge-unreadable"  # no yes or no in the reply: wrong by the official rule
    if memory_empty:
        return "memory-empty"
    if evidence_in_context is None and evidence_unknowable:
        return "evidence-not-applicable"
    if evidence_in_context is None:
        return "answered-wrong"  # no evidence turns to look for (abstention, assistant-only)
    return "retrieved-not-answered" if evidence_in_context else "evidence-not-retrieved"
