"""The judge stage for one question: every configured judge, every repeat, plus the fallback,
given what the question's benchmark says it is judged by (lme_bench.judge.judge_input), or the
benchmark's own scorer (lme_bench.benchmarks.scoring_hooks: `own_judge`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge.judge_input import with_judge_input
from lme_bench.judge.panel import JudgePanel
from lme_bench.judge.prompts import JudgePrompt
from lme_bench.judge.rule_scorer import rule_row
from lme_bench.judge.runner import LlmJudge, fallback_row
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow


async def judge_question(
    ref: QuestionRef,
    hypothesis: HypothesisRow,
    judges: JudgePanel,
    stand_in: Callable[[LlmJudge, int], LlmJudge] | None = None,
) -> list[ScoreRow]:
    """Score rows (attribution left to the report, which sees every stage), by the run's
    judges (built once per run: lme_bench.judge.panel). `stand_in` may swap a judge for one
    whose model is another (a batch job's reply), per repeat."""
    if hypothesis.status != "ok" or hypothesis.hypothesis is None:
        return []
    scoring = judges.scoring(ref.benchmark)
    if scoring.own_judge is not None:  # the benchmark's own scorer (BEAM's rubric judge)
        own = judges.own_judge(ref.benchmark, scoring.own_judge)
        rows: list[ScoreRow] = await own.score(ref, hypothesis, judges.settings)
        return rows
    instance = ref.load()
    if scoring.score_answer is not None:  # the benchmark's own rule: no model called
        return [rule_row(ref, scoring.score_answer, instance, hypothesis.hypothesis)]
    given = with_judge_input(judges.prompts, scoring, instance)
    if given is None:  # the benchmark asks no LLM verdict of this question
        return []
    verdict = ToJudge(instance.question, given.answer, hypothesis.hypothesis, given.prompt)
    return await _judge_rows(ref, verdict, judges, stand_in, abstains=given.abstains)


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
    judges: JudgePanel,
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
    for judge in judges.llm:
        for repeat in range(judges.repeats):
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
    if judges.fallback or not rows:
        rows.append(
            fallback_row(
                **common, answer=given.answer, hypothesis=given.hypothesis, abstains=abstains
            )
        )
    return rows
