"""The judge stage for one question: every configured judge, every repeat, plus the fallback,
given what the question's benchmark says it is judged by (lme_bench.judge.judge_input), or the
benchmark's own scorer (lme_bench.benchmarks.scoring_hooks: `own_judge`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lme_bench.common.limits import provider_limiter
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge.family_requests import judge_request
from lme_bench.judge.judge_input import benchmark_scoring, prompted_input
from lme_bench.judge.prompts import JudgePrompt, judge_prompts
from lme_bench.judge.rule_scorer import rule_row
from lme_bench.judge.runner import LlmJudge, fallback_row
from lme_bench.providers.calls import ChatCall
from lme_bench.providers.factory import ModelSpec, parse_model, retry_policy
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow


def judge_model(spec: ModelSpec, settings: Settings) -> ChatCall:
    """The judge's call, sending the official request body where the model takes it, else the
    nearest body its family accepts (lme_bench.judge.request_shapes); its `request_shape`
    says which."""
    return judge_request(spec, settings)


def judges(settings: Settings) -> list[LlmJudge]:
    """The LLM judges a run uses: [models] judge and [judge] second_model."""
    prompts = judge_prompts(settings.judge)
    found = []
    for role, text in (("judge", settings.models.judge), ("judge", settings.judge.second_model)):
        if text:
            spec = parse_model(role, text, settings)
            policy = retry_policy(spec, settings.models)
            limiter = provider_limiter(settings, spec.provider)
            found.append(
                LlmJudge(spec.label, judge_model(spec, settings), prompts, policy, limiter)
            )
    return found


async def judge_question(
    ref: QuestionRef,
    hypothesis: HypothesisRow,
    settings: Settings,
    stand_in: Callable[[LlmJudge, int], LlmJudge] | None = None,
) -> list[ScoreRow]:
    """Score rows (attribution left to the report, which sees every stage). `stand_in` may
    swap a judge for one whose model is another (a batch job's reply), per repeat."""
    if hypothesis.status != "ok" or hypothesis.hypothesis is None:
        return []
    scoring = benchmark_scoring(ref.benchmark, settings)
    if scoring.own_judge is not None:  # the benchmark's own scorer (BEAM's rubric judge)
        rows: list[ScoreRow] = await scoring.own_judge.score(ref, hypothesis, settings)
        return rows
    instance = ref.load()
    if scoring.score_answer is not None:  # the benchmark's own rule: no model called
        return [rule_row(ref, scoring.score_answer, instance, hypothesis.hypothesis)]
    given = prompted_input(ref.benchmark, instance, judge_prompts(settings.judge), settings)
    if given is None:  # the benchmark asks no LLM verdict of this question
        return []
    verdict = ToJudge(instance.question, given.answer, hypothesis.hypothesis, given.prompt)
    return await _judge_rows(ref, verdict, settings, stand_in, abstains=given.abstains)


@dataclass(frozen=True, slots=True)
class ToJudge:
    """What the judges are given for one question: the question, the correct answer's field
    (a gold answer, or an explanation of why there is none), the response, and the prompt
    (None: the one the official script chooses for the question's type and id)."""

    question: str
    answer: str
    hypothesis: str
    prompt: JudgePrompt | None = None


async def _judge_rows(
    ref: QuestionRef,
    given: ToJudge,
    settings: Settings,
    stand_in: Callable[[LlmJudge, int], LlmJudge] | None,
    abstains: bool | None = None,
) -> list[ScoreRow]:
    """Every configured judge, every repeat, plus the fallback (`abstains`: its rule for
    whether the right response says the answer is not there; None: `_abs` in the id)."""
    common: dict[str, Any] = {
        "question_id": ref.question_id,
        "question_type": ref.question_type,
        "is_abstention": ref.is_abstention,
    }
    rows = []
    for judge in judges(settings):
        for repeat in range(settings.judge.repeats):
            used = stand_in(judge, repeat) if stand_in is not None else judge
            rows.append(
                await used.judge(
                    **common,
                    question=given.question,
                    answer=given.answer,
                    hypothesis=given.hypothesis,
                    repeat=repeat,
                    prompt=given.prompt,
                )
            )
    if settings.judge.fallback or not rows:
        rows.append(
            fallback_row(
                **common, answer=given.answer, hypothesis=given.hypothesis, abstains=abstains
            )
        )
    return rows
