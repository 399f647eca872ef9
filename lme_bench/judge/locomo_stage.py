"""An LLM judge for LoCoMo questions, beside LoCoMo's official metric (token F1, which stays the
official figure: LoCoMo's evaluation has no LLM judge, so this verdict is lme-bench's own).

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

from dataclasses import dataclass

from lme_bench.benchmarks.builtin.locomo import CATEGORY_NAMES
from lme_bench.judge.prompts import ABSTENTION, DEFAULT, JudgePrompt, PromptSet

LOCOMO = "locomo"
CATEGORIES = frozenset(CATEGORY_NAMES.values())
ADVERSARIAL = CATEGORY_NAMES[5]
OPEN_DOMAIN = CATEGORY_NAMES[3]
NO_ANSWER_EXPLANATION = (
    "The conversation does not say; a right response says the information is not available."
)
NOT_OFFICIAL = "LLM judge, not the official LoCoMo metric"


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """What the judge is given for one question: its prompt and the correct answer's field."""

    prompt: JudgePrompt
    answer: str
    abstains: bool  # a right response says the answer is not there (the fallback's rule)


def criterion(category: str) -> str:
    """The prompt a LoCoMo category is judged with: `abstention` or `default` (generic)."""
    if category not in CATEGORIES:
        raise ValueError(f"LoCoMo judge: unknown category {category!r}")
    return ABSTENTION if category == ADVERSARIAL else DEFAULT


def locomo_input(prompts: PromptSet, category: str, gold_answer: str) -> JudgeInput:
    """The prompt and correct answer a LoCoMo question of `category` is judged with."""
    if criterion(category) == ABSTENTION:
        return JudgeInput(prompts.abstention, NO_ANSWER_EXPLANATION, abstains=True)
    answer = gold_answer.split(";")[0].strip() if category == OPEN_DOMAIN else gold_answer
    return JudgeInput(prompts.generic, answer, abstains=False)


def prompt_mapping(prompts: PromptSet | None = None) -> dict[str, dict[str, str]]:
    """Per category (in LoCoMo's order), the prompt it is judged with and what stands for the
    correct answer; with `prompts`, each prompt's sha256 too (in cache keys)."""
    found = {}
    for category in CATEGORY_NAMES.values():
        chosen = criterion(category)
        record = {
            "prompt": chosen,
            "answer": NO_ANSWER_EXPLANATION if chosen == ABSTENTION else "the gold answer",
        }
        if category == OPEN_DOMAIN:
            record["answer"] += " up to its first ';'"
        if prompts is not None:
            record["sha256"] = locomo_input(prompts, category, "").prompt.sha256
        found[category] = record
    return found
