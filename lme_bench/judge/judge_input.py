"""What the LLM judge is given for a question, as its benchmark says
(lme_bench.benchmarks.scoring_hooks: `judge_input`, else the generic criterion), with the
prompt named there taken from the run's prompt set."""

from __future__ import annotations

from dataclasses import dataclass

from lme_bench.benchmarks.scoring_hooks import (
    ABSTENTION,
    DEFAULT_BENCHMARK,
    GENERIC,
    BenchmarkScoring,
    JudgedQuestion,
    JudgeInput,
    scoring_of,
)
from lme_bench.config.settings import Settings
from lme_bench.judge.prompts import JudgePrompt, PromptSet


@dataclass(frozen=True, slots=True)
class PromptedInput:
    """A judge input with its prompt (None: the one the official script chooses for the
    question's type and id)."""

    prompt: JudgePrompt | None
    answer: str
    abstains: bool | None


def benchmark_scoring(benchmark: str, settings: Settings) -> BenchmarkScoring:
    """The scoring hooks of the benchmark a question comes from."""
    return scoring_of(benchmark or DEFAULT_BENCHMARK, settings.dataset.benchmark)


def with_prompt(prompts: PromptSet, given: JudgeInput) -> PromptedInput:
    """`given` with the prompt it names taken from `prompts`."""
    named = {GENERIC: prompts.generic, ABSTENTION: prompts.abstention}
    if given.prompt is not None and given.prompt not in named:
        raise ValueError(
            f"judge input: unknown prompt {given.prompt!r} (use {GENERIC!r} or"
            f" {ABSTENTION!r}, or None for the official choice)"
        )
    prompt = named[given.prompt] if given.prompt is not None else None
    return PromptedInput(prompt, given.answer, given.abstains)


def prompted_input(
    benchmark: str, question: JudgedQuestion, prompts: PromptSet, settings: Settings
) -> PromptedInput | None:
    """What the judges are given for `question` of `benchmark`; None: no LLM verdict."""
    return with_judge_input(prompts, benchmark_scoring(benchmark, settings), question)


def with_judge_input(
    prompts: PromptSet, scoring: BenchmarkScoring, question: JudgedQuestion
) -> PromptedInput | None:
    """What the judges are given for `question`, as its benchmark's `scoring` says; None: no
    LLM verdict."""
    given = scoring.judge_input(question)
    return with_prompt(prompts, given) if given is not None else None


def rendered(prompts: PromptSet, given: PromptedInput, question: JudgedQuestion) -> JudgePrompt:
    """The prompt the judge is sent for `question`."""
    if given.prompt is not None:
        return given.prompt
    return prompts.for_question(question.question_id, question.question_type)


def prompt_sha256(prompts: PromptSet, name: str) -> str:
    """The digest of the prompt `name` (`GENERIC` or `ABSTENTION`) of `prompts`."""
    prompt = with_prompt(prompts, JudgeInput(name, "")).prompt
    return prompt.sha256 if prompt is not None else ""
