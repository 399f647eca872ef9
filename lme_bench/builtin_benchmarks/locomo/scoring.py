"""LoCoMo's official question-answering score (`task_eval/evaluation.py`, with the per-category
and overall aggregation of `task_eval/evaluation_stats.py`), reimplemented.

Per question, on the prediction's text:
- normalisation: commas deleted, lower case, ASCII punctuation deleted, the words a, an, the and
  "and" replaced by a space, whitespace collapsed;
- tokens: the normalised text split on whitespace, each Porter-stemmed (NLTK's PorterStemmer in
  its default mode; no NLTK data is needed);
- categories 2 and 4: token F1 (0 when no token is shared); category 3 the same against the gold
  cut at its first ';';
- category 1: both sides split on ','; the mean over gold parts of the best token F1 against any
  predicted part;
- category 5: 1 when the lower-cased prediction contains "no information available" or
  "not mentioned", else 0 (the gold is not read);
- evidence recall: the share of the gold dialog ids among the retrieved ids; when the retrieved
  ids are sessions (`S3`), the share of gold ids whose session was retrieved; 1 when the gold
  lists no evidence.
Aggregation: a category's score is the sum of its questions' scores over their count, overall the
sum over all questions over their count; a category's recall sums the recall of its questions
that have gold evidence and divides by all its questions, as the official statistics do.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy
import regex
from nltk.stem import PorterStemmer

from lme_bench.builtin_benchmarks.locomo.records import ADVERSARIAL, Gold

# The order the official statistics add the categories in for the overall score.
_OVERALL_ORDER = (4, 1, 2, 3, 5)
ABSTENTION_PHRASES = ("no information available", "not mentioned")
_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = regex.compile(r"\b(a|an|the|and)\b")
_STEMMER = PorterStemmer()


def normalize_answer(text: str) -> str:
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stem(word))


def stemmed_tokens(text: str) -> list[str]:
    return [_stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    predicted, expected = stemmed_tokens(prediction), stemmed_tokens(gold)
    shared = sum((Counter(predicted) & Counter(expected)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(expected)
    return (2 * precision * recall) / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    predicted = [part.strip() for part in prediction.split(",")]
    expected = [part.strip() for part in gold.split(",")]
    best = [max(token_f1(p, g) for p in predicted) for g in expected]
    return float(numpy.mean(best))  # numpy's summation order, as the official code


def says_no_information(prediction: str) -> bool:
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in ABSTENTION_PHRASES)


def answer_score(gold: Gold, prediction: str) -> float:
    """The official per-question score of `prediction` for a question of `gold`'s category."""
    if gold.category == ADVERSARIAL:
        return 1.0 if says_no_information(prediction) else 0.0
    if gold.answer is None:
        raise ValueError(f"{gold.question_id}: category {gold.category} has no gold answer")
    if gold.category == 1:
        return multi_answer_f1(prediction, gold.answer)
    if gold.category == 3:
        return token_f1(prediction, gold.answer.split(";")[0].strip())
    if gold.category in (2, 4):
        return token_f1(prediction, gold.answer)
    raise ValueError(f"{gold.question_id}: unknown category {gold.category}")


def evidence_recall(retrieved: Sequence[str], evidence: Sequence[str]) -> float:
    """Share of the gold dialog ids found among `retrieved` dialog ids (or `S<n>` sessions)."""
    if not evidence:
        return 1.0
    if not retrieved:
        return 0.0  # the official script cannot score an empty retrieval: nothing found
    if retrieved[0].startswith("S"):
        sessions = {item[1:] for item in retrieved}
        found = sum(1 for ev in evidence if ev.split(":")[0][1:] in sessions)
    else:
        ids = set(retrieved)
        found = sum(1 for ev in evidence if ev in ids)
    return found / len(evidence)


@dataclass(frozen=True, slots=True)
class ScoredQuestion:
    question_id: str
    category: int
    score: float
    recall: float | None  # None: no retrieved ids were given
    has_evidence: bool


def score_question(
    gold: Gold, prediction: str, retrieved: Sequence[str] | None = None
) -> ScoredQuestion:
    return ScoredQuestion(
        question_id=gold.question_id,
        category=gold.category,
        score=answer_score(gold, prediction),
        recall=None if retrieved is None else evidence_recall(retrieved, gold.evidence),
        has_evidence=bool(gold.evidence),
    )


@dataclass(frozen=True, slots=True)
class CategoryScore:
    count: int
    total: float  # the sum of the questions' scores
    score: float  # total / count
    recall: float | None  # None when no question of the category had retrieved ids


@dataclass(frozen=True, slots=True)
class LocomoScores:
    categories: dict[int, CategoryScore]  # only the categories present
    count: int
    overall: float
    overall_recall: float | None


def _recall_total(scored: Sequence[ScoredQuestion]) -> float | None:
    given = [q for q in scored if q.recall is not None]
    if not given:
        return None
    return sum(q.recall for q in given if q.has_evidence and q.recall is not None)


def aggregate(scored: Iterable[ScoredQuestion]) -> LocomoScores:
    by_category: dict[int, list[ScoredQuestion]] = {}
    for question in scored:
        by_category.setdefault(question.category, []).append(question)
    categories = {}
    for category in sorted(by_category):
        items = by_category[category]
        total = sum(q.score for q in items)
        recall_total = _recall_total(items)
        categories[category] = CategoryScore(
            count=len(items),
            total=total,
            score=total / len(items),
            recall=None if recall_total is None else recall_total / len(items),
        )
    count = sum(c.count for c in categories.values())
    ordered = [c for c in _OVERALL_ORDER if c in categories]
    recall_totals = [t for items in by_category.values() if (t := _recall_total(items)) is not None]
    return LocomoScores(
        categories=categories,
        count=count,
        overall=sum(categories[c].total for c in ordered) / count if count else 0.0,
        overall_recall=sum(recall_totals) / count if recall_totals else None,
    )
