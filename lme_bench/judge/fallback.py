"""The no-LLM fallback judge: normalised exact / contains match, clearly labelled as such.

It is a rough floor, never mixed with LLM-judged figures: it cannot grade preference rubrics
(those rows are `ungradable`), and for abstention questions it looks for a plain admission that
the information is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lme_bench.dataset.models import is_abstention_id
from lme_bench.metrics.answer_text import normalize

FALLBACK_JUDGE = "fallback:normalized-match"
_ABSTAINS = (
    "don't know",
    "do not know",
    "not mentioned",
    "no information",
    "not enough information",
    "cannot answer",
    "can't answer",
    "unable to",
    "doesn't say",
    "does not say",
    "not sure",
    "no record",
    "haven't mentioned",
    "have not mentioned",
    "didn't mention",
    "did not mention",
    "not specified",
    "isn't mentioned",
    "is not mentioned",
    "no mention",
)


@dataclass(frozen=True, slots=True)
class FallbackVerdict:
    status: Literal["ok", "ungradable"]
    label: bool | None  # None when ungradable
    raw: str


def fallback_verdict(
    question_id: str,
    question_type: str,
    answer: str,
    hypothesis: str,
    abstains: bool | None = None,
) -> FallbackVerdict:
    """`abstains`: whether the right response says the answer is not there; None: the
    official test, `_abs` in the id (another benchmark's questions say it themselves)."""
    if question_type == "single-session-preference":
        return FallbackVerdict("ungradable", None, "the no-LLM fallback cannot grade rubrics")
    said = normalize(hypothesis)
    if is_abstention_id(question_id) if abstains is None else abstains:
        label = any(normalize(p) in said for p in _ABSTAINS)
        return FallbackVerdict("ok", label, "abstains" if label else "answers")
    gold = normalize(answer)
    if not gold:
        return FallbackVerdict("ungradable", None, "empty gold answer")
    label = said == gold or f" {gold} " in f" {said} "
    return FallbackVerdict("ok", label, "match" if label else "no match")
