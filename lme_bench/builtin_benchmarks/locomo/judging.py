"""How LoCoMo questions are judged by an LLM, beside LoCoMo's official metric (token F1, which
stays the official figure: LoCoMo's evaluation has no LLM judge, so this verdict is
lme-bench's own).

The judge uses the run's prompt set (lme_bench.judge.prompts: lme-bench's wording, the official
LongMemEval prompts of `[judge] official_repo`, or a custom folder) with this mapping:
- categories 1-4 (multi-hop, temporal, open-domain, single-hop): the set's generic criterion
  (`default`: does the response contain the correct answer), never the temporal off-by-one
  leniency or the knowledge-update rule, which are LongMemEval's; the correct answer is the gold
  answer, an open-domain one cut at its first ';' as the official F1 reads it;
- category 5 (adversarial): the abstention prompt, whose explanation is `NO_ANSWER_EXPLANATION`
  (a right response says the conversation does not hold the answer), never the adversarial
  answer, which is the tempting wrong one.
"""

from __future__ import annotations

from collections.abc import Callable

from lme_bench.benchmarks.scoring_hooks import (
    ABSTENTION,
    GENERIC,
    NO_ANSWER_EXPLANATION,
    JudgedQuestion,
    JudgeInput,
)
from lme_bench.builtin_benchmarks.locomo.benchmark import CATEGORY_NAMES

CATEGORIES = frozenset(CATEGORY_NAMES.values())
ADVERSARIAL = CATEGORY_NAMES[5]
OPEN_DOMAIN = CATEGORY_NAMES[3]
NOT_OFFICIAL = "LLM judge, not the official LoCoMo metric"


def criterion(category: str) -> str:
    """The prompt a LoCoMo category is judged with: `abstention` or `default` (generic)."""
    if category not in CATEGORIES:
        raise ValueError(f"LoCoMo judge: unknown category {category!r}")
    return ABSTENTION if category == ADVERSARIAL else GENERIC


def category_input(category: str, gold_answer: str) -> JudgeInput:
    """The prompt and correct answer a LoCoMo question of `category` is judged with."""
    if criterion(category) == ABSTENTION:
        return JudgeInput(ABSTENTION, NO_ANSWER_EXPLANATION, abstains=True)
    answer = gold_answer.split(";")[0].strip() if category == OPEN_DOMAIN else gold_answer
    return JudgeInput(GENERIC, answer, abstains=False)


def judge_input(question: JudgedQuestion) -> JudgeInput:
    """The benchmark's `judge_input` hook (lme_bench.benchmarks.scoring_hooks)."""
    return category_input(question.question_type, question.answer)


def prompt_mapping(
    prompt_sha256: Callable[[str], str] | None = None,
) -> dict[str, dict[str, str]]:
    """Per category (in LoCoMo's order), the prompt it is judged with and what stands for the
    correct answer; with `prompt_sha256` (a prompt's name -> its digest), each prompt's sha256
    too (in cache keys)."""
    found = {}
    for category in CATEGORY_NAMES.values():
        chosen = criterion(category)
        record = {
            "prompt": chosen,
            "answer": NO_ANSWER_EXPLANATION if chosen == ABSTENTION else "the gold answer",
        }
        if category == OPEN_DOMAIN:
            record["answer"] += " up to its first ';'"
        if prompt_sha256 is not None:
            record["sha256"] = prompt_sha256(category_input(category, "").prompt or GENERIC)
        found[category] = record
    return found


def judge_cache_part(question_type: str, prompt_sha256: Callable[[str], str]) -> dict[str, str]:
    """The benchmark's `judge_cache_part` hook: the prompt a question's category is judged with
    and what stands for its correct answer, so a change to either judges it again."""
    return prompt_mapping(prompt_sha256)[question_type]
