"""LoCoMo's scoring rules, each against a plain computation written here from the rules."""

from __future__ import annotations

import re
import string
from collections import Counter
from pathlib import Path

import pytest
from nltk.stem import PorterStemmer

from lme_bench.builtin_benchmarks.locomo.reader import load_samples
from lme_bench.builtin_benchmarks.locomo.records import Gold
from lme_bench.builtin_benchmarks.locomo.scoring import (
    aggregate,
    answer_score,
    evidence_recall,
    multi_answer_f1,
    normalize_answer,
    score_question,
    token_f1,
)
from tests.benchmarks.locomo.samples import listed_sample, write_json

STEMMER = PorterStemmer()


def plain_tokens(text: str) -> list[str]:
    text = text.replace(",", "").lower()
    text = "".join(c for c in text if c not in string.punctuation)
    words = [w for w in re.sub(r"\b(a|an|the|and)\b", " ", text).split()]
    return [STEMMER.stem(w) for w in words]


def plain_f1(prediction: str, gold: str) -> float:
    p, g = plain_tokens(prediction), plain_tokens(gold)
    same = sum(min(p.count(t), g.count(t)) for t in set(p))
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def plain_multi_f1(prediction: str, gold: str) -> float:
    predicted = [part.strip() for part in prediction.split(",")]
    parts = [part.strip() for part in gold.split(",")]
    return sum(max(plain_f1(p, g) for p in predicted) for g in parts) / len(parts)


def gold(category: int, answer: str | None, evidence: tuple[str, ...] = ("D1:1",)) -> Gold:
    return Gold("c-q0", category, answer, "a trap" if category == 5 else None, evidence)


PREDICTIONS = [
    "violin, clarinet",
    "The clarinet and the violin!",
    "Clarinets",
    "she plays violins, drums, clarinet",
    "piano",
    "",
    "Likely no",
    "No; she has a dog",
    "2023",
    "In May 2023.",
    "Pip, the greyhound",
]
GOLDS = ["violin, clarinet", "Likely no; she has a dog", "2023", "Pip", "a greyhound, Pip"]


def test_normalisation_drops_commas_punctuation_articles_and_and() -> None:
    assert normalize_answer("The Cat, and a DOG's toy; an apple!") == "cat dogs toy apple"
    assert normalize_answer("Sandy band, theatre") == "sandy band theatre"
    assert normalize_answer("  A\tb  ") == "b"
    assert normalize_answer("café — naïve") == "café — naïve"  # only ASCII punctuation goes


@pytest.mark.parametrize("answer", GOLDS)
@pytest.mark.parametrize("prediction", PREDICTIONS)
def test_each_category_scores_as_the_plain_rules(prediction: str, answer: str) -> None:
    assert answer_score(gold(1, answer), prediction) == pytest.approx(
        plain_multi_f1(prediction, answer), abs=1e-12
    )
    cut = answer.split(";")[0].strip()
    assert answer_score(gold(3, answer), prediction) == pytest.approx(
        plain_f1(prediction, cut), abs=1e-12
    )
    for category in (2, 4):
        assert answer_score(gold(category, answer), prediction) == pytest.approx(
            plain_f1(prediction, answer), abs=1e-12
        )


def test_worked_examples() -> None:
    assert token_f1("The dogs running", "dog runs") == 1.0  # stems: dog, run on both sides
    assert token_f1("a dog ran", "dog") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("", "dog") == 0.0 and token_f1("dog", "") == 0.0 and token_f1("", "") == 0.0
    assert token_f1("the an a", "and") == 0.0
    # category 1: gold parts violin / clarinet, each matched by its best predicted part
    assert multi_answer_f1("clarinet", "violin, clarinet") == 0.5
    assert multi_answer_f1("violin and clarinet", "violin, clarinet") == pytest.approx(2 / 3)
    # category 3: only the gold before the first ';' counts
    assert answer_score(gold(3, "Likely no; she has a dog"), "likely no") == 1.0
    # category 2 keeps the ';' tail
    assert answer_score(gold(2, "Likely no; she has a dog"), "likely no") < 1.0


@pytest.mark.parametrize(
    ("prediction", "score"),
    [
        ("Not mentioned in the conversation", 1.0),
        ("NO INFORMATION AVAILABLE.", 1.0),
        ("It is not mentioned.", 1.0),
        ("(a) not mentioned", 1.0),
        ("a trap", 0.0),
        ("No information is available", 0.0),
        ("not  mentioned", 0.0),
        ("", 0.0),
    ],
)
def test_category_five_is_a_phrase_test(prediction: str, score: float) -> None:
    assert answer_score(gold(5, None), prediction) == score


def test_a_category_without_its_gold_answer_is_refused() -> None:
    with pytest.raises(ValueError, match="c-q0: category 4 has no gold answer"):
        answer_score(gold(4, None), "x")


def test_evidence_recall_by_dialog_ids_and_by_sessions() -> None:
    evidence = ["D1:3", "D2:5", "D4:1"]
    assert evidence_recall(["D2:5", "D1:3", "D9:9"], evidence) == pytest.approx(2 / 3)
    assert evidence_recall(["D1:30"], evidence) == 0.0
    assert evidence_recall(["S2", "S4"], evidence) == pytest.approx(2 / 3)
    assert evidence_recall(["S1", "S2", "S4"], evidence) == 1.0
    assert evidence_recall(["D1:3"], []) == 1.0
    assert evidence_recall([], evidence) == 0.0


def test_aggregate_per_category_and_overall_as_the_official_statistics(tmp_path: Path) -> None:
    (sample,) = load_samples(write_json(tmp_path / "l.json", [listed_sample()]))
    answers = ["violin", "2023", "likely no", "Rex", "not mentioned"]
    retrieved = [["D2:2"], None, ["D9:9"], ["D1:1", "D2:2"], ["D1:1"]]
    scored = [
        score_question(g, a, r) for g, a, r in zip(sample.gold, answers, retrieved, strict=True)
    ]
    expected = [plain_multi_f1("violin", "violin, clarinet"), 1.0, 1.0, 0.0, 1.0]
    assert [q.score for q in scored] == pytest.approx(expected)
    assert [q.recall for q in scored] == [1.0, None, 0.0, 1.0, 1.0]
    scores = aggregate([*scored, score_question(sample.gold[3], "Pip", ["D1:1"])])
    assert {c: s.count for c, s in scores.categories.items()} == {1: 1, 2: 1, 3: 1, 4: 2, 5: 1}
    assert scores.categories[4].score == 0.5 and scores.categories[4].total == 1.0
    assert scores.categories[4].recall == 1.0
    assert scores.categories[2].recall is None  # nothing retrieved for it
    # category 5's question has no evidence: its recall of 1 is not added, its count divides
    assert scores.categories[5].recall == 0.0
    assert scores.count == 6
    assert scores.overall == pytest.approx((sum(expected) + 1.0) / 6)
    assert scores.overall_recall == pytest.approx((1.0 + 0.0 + 2.0) / 6)
    assert aggregate([]).count == 0 and aggregate([]).overall_recall is None


def test_scores_per_category_equal_the_plain_computation_on_the_sample(tmp_path: Path) -> None:
    (sample,) = load_samples(write_json(tmp_path / "l.json", [listed_sample()]))
    for prediction in PREDICTIONS:
        scores = aggregate(score_question(g, prediction) for g in sample.gold)
        plain = {
            1: plain_multi_f1(prediction, "violin, clarinet"),
            2: plain_f1(prediction, "2023"),
            3: plain_f1(prediction, "Likely no"),
            4: plain_f1(prediction, "Pip"),
            5: 0.0,
        }
        assert {c: s.score for c, s in scores.categories.items()} == pytest.approx(plain)
        assert Counter(q.category for q in sample.gold) == {c: 1 for c in plain}
