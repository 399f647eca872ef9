"""A benchmark's own rule as the judge stage applies it (lme_bench.benchmarks.scoring_hooks:
`score_answer`): one verdict row a question, no model called."""

from __future__ import annotations

from collections.abc import Callable

from lme_bench.benchmarks.scoring_hooks import JudgedQuestion, rule_digest
from lme_bench.dataset.shards import QuestionRef
from lme_bench.results.qa_tables import ScoreRow

RULE_KIND = "rule"


def rule_row(
    ref: QuestionRef,
    rule: Callable[[JudgedQuestion, str], bool],
    question: JudgedQuestion,
    response: str,
) -> ScoreRow:
    """The rule's verdict on `response` as a score row (judge `rule:<benchmark>`)."""
    label = bool(rule(question, response))
    return ScoreRow(
        question_id=ref.question_id,
        question_type=ref.question_type,
        is_abstention=ref.is_abstention,
        judge=f"{RULE_KIND}:{ref.benchmark}",
        judge_kind=RULE_KIND,
        repeat=0,
        prompt_version=RULE_KIND,
        prompt_name=getattr(rule, "__name__", RULE_KIND),
        prompt_sha256=rule_digest(rule),
        label=label,
        readable=None,
        raw_verdict="yes" if label else "no",
        status="ok",
        attribution="",
    )
