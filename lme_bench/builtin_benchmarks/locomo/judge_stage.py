"""LoCoMo's judging rule, as the judge's prompts apply it: the rule itself is LoCoMo's own
(locomo.judging, its `judge_input` hook); these names serve the modules
that show it (its prompt per category, with the run's prompts)."""

from __future__ import annotations

import functools

from lme_bench.benchmarks.scoring_hooks import NO_ANSWER_EXPLANATION
from lme_bench.builtin_benchmarks.locomo import judging
from lme_bench.builtin_benchmarks.locomo.judging import CATEGORIES, NOT_OFFICIAL, criterion
from lme_bench.judge.judge_input import PromptedInput, prompt_sha256, with_prompt
from lme_bench.judge.prompts import PromptSet

__all__ = ["CATEGORIES", "NOT_OFFICIAL", "NO_ANSWER_EXPLANATION", "criterion", "locomo_input"]


def locomo_input(prompts: PromptSet, category: str, gold_answer: str) -> PromptedInput:
    """The prompt and correct answer a LoCoMo question of `category` is judged with."""
    return with_prompt(prompts, judging.category_input(category, gold_answer))


def prompt_mapping(prompts: PromptSet | None = None) -> dict[str, dict[str, str]]:
    """Per category, the prompt it is judged with and what stands for the correct answer;
    with `prompts`, each prompt's sha256 too."""
    if prompts is None:
        return judging.prompt_mapping()
    return judging.prompt_mapping(functools.partial(prompt_sha256, prompts))
