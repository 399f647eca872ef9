"""What the LLM judge is given for a question of a plug-in benchmark (one lme-bench does not
know): the prompt set's generic criterion (does the response contain the correct answer) with
the question's first gold answer, or, for a question whose answer is not in the history
(`Gold.abstention`), the abstention prompt with the neutral explanation LoCoMo's adversarial
questions get. The verdict is lme-bench's, not an official metric of that benchmark.
"""

from __future__ import annotations

from lme_bench.judge.locomo_stage import NO_ANSWER_EXPLANATION, JudgeInput
from lme_bench.judge.prompts import PromptSet


def plugin_input(prompts: PromptSet, gold_answer: str, abstention: bool) -> JudgeInput:
    """The prompt and correct answer a plug-in benchmark's question is judged with."""
    if abstention:
        return JudgeInput(prompts.abstention, NO_ANSWER_EXPLANATION, abstains=True)
    return JudgeInput(prompts.generic, gold_answer, abstains=False)
