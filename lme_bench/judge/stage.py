"""The judge stage for one question: every configured judge, every repeat, plus the fallback."""

from __future__ import annotations

from typing import Any

from lme_bench.config import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge.prompts import load_prompt_set
from lme_bench.judge.runner import LlmJudge, fallback_row
from lme_bench.limits import provider_limiter
from lme_bench.providers.factory import build_chat_model, parse_model, retry_policy
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

JUDGE_MAX_TOKENS = 10  # as the official evaluation


def judges(settings: Settings) -> list[LlmJudge]:
    """The LLM judges a run uses: [models] judge and [judge] second_model, at temperature 0."""
    prompts = load_prompt_set(settings.judge.prompts_dir)
    models = settings.models.model_copy(update={"temperature": 0.0, "max_tokens": JUDGE_MAX_TOKENS})
    found = []
    for role, text in (("judge", settings.models.judge), ("judge", settings.judge.second_model)):
        if text:
            spec = parse_model(role, text, settings)
            model = build_chat_model(spec, models)
            policy = retry_policy(spec, settings.models)
            limiter = provider_limiter(settings, spec.provider)
            found.append(LlmJudge(spec.label, model, prompts, policy, limiter))
    return found


async def judge_question(
    ref: QuestionRef, hypothesis: HypothesisRow, settings: Settings
) -> list[ScoreRow]:
    """Score rows (attribution left to the report, which sees every stage)."""
    if hypothesis.status != "ok" or hypothesis.hypothesis is None:
        return []
    instance = ref.load()
    common: dict[str, Any] = {
        "question_id": ref.question_id,
        "question_type": ref.question_type,
        "is_abstention": ref.is_abstention,
    }
    rows = [
        await judge.judge(
            **common,
            question=instance.question,
            answer=instance.answer,
            hypothesis=hypothesis.hypothesis,
            repeat=repeat,
        )
        for judge in judges(settings)
        for repeat in range(settings.judge.repeats)
    ]
    if settings.judge.fallback or not rows:
        rows.append(
            fallback_row(**common, answer=instance.answer, hypothesis=hypothesis.hypothesis)
        )
    return rows
