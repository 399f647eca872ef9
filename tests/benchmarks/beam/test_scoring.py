"""BEAM's scoring arithmetic against hand-worked figures and scipy's Kendall tau-b."""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import kendalltau

from lme_bench.builtin_benchmarks.beam.scoring import (
    QuestionScore,
    aggregate,
    align,
    item_score,
    judge_score,
    kendall_tau_b,
    ordering_score,
    parse_judge_reply,
    reported_score,
    response_lines,
    says_same_event,
)


def test_kendall_tau_b_equals_scipy_on_random_tied_rankings() -> None:
    rng = random.Random(3)
    for _ in range(500):
        n = rng.randint(0, 12)
        x = [rng.randint(1, 5) for _ in range(n)]
        y = [rng.randint(1, 5) for _ in range(n)]
        theirs = float(kendalltau(x, y, variant="b")[0]) if n >= 2 else math.nan
        ours = kendall_tau_b(x, y)
        assert (math.isnan(theirs) and math.isnan(ours)) or ours == pytest.approx(theirs, abs=1e-12)


def test_ordering_score_worked_by_hand() -> None:
    # rubric a b c; answer lines b, a, x: tp 2, fp 1 (x), fn 1 (c): precision = recall = F1 = 2/3.
    # ranks over the union a b c x (absent = 5): rubric 1 2 3 5, answer 2 1 5 3:
    # pairs ab and cx discordant, the other four concordant, no ties: tau = 2/6.
    score = ordering_score(["a", "b", "c"], ["b", "a", "x"])
    assert (score.precision, score.recall) == pytest.approx((2 / 3, 2 / 3))
    assert score.f1 == pytest.approx(2 / 3)
    assert score.tau_norm == pytest.approx((1 / 3 + 1) / 2)
    assert score.final_score == pytest.approx(2 / 3 * 2 / 3)


def test_ordering_score_perfect_reversed_and_empty() -> None:
    assert ordering_score(["a", "b", "c"], ["a", "b", "c"]).final_score == 1.0
    reversed_ = ordering_score(["a", "b", "c"], ["c", "b", "a"])
    assert (reversed_.f1, reversed_.tau_norm, reversed_.final_score) == (1.0, 0.0, 0.0)
    empty = ordering_score(["a", "b"], [""])  # an empty answer is one blank line
    assert (empty.precision, empty.recall, empty.f1, empty.final_score) == (0.0, 0.0, 0.0, 0.0)


def test_ordering_score_counts_repeated_lines_as_the_official_does() -> None:
    # tp counts distinct items, fp every unmatched line; a repeated item ranks at its last place.
    score = ordering_score(["a", "b"], ["a", "a", "b", "z", "z"])
    assert (score.precision, score.recall) == (2 / 4, 1.0)
    union_ranks_rubric, union_ranks_answer = [1, 2, 4], [2, 3, 5]  # a b z; "a" last at 2
    tau = float(kendalltau(union_ranks_rubric, union_ranks_answer, variant="b")[0])
    assert score.tau_norm == pytest.approx((tau + 1) / 2)


def test_a_one_item_rubric_answered_exactly_has_no_tau() -> None:
    assert math.isnan(ordering_score(["a"], ["a"]).tau_norm)  # as scipy: constant rankings


def test_alignment_takes_the_first_unused_item_per_line_in_order() -> None:
    asked: list[tuple[str, str]] = []

    def same(item: str, line: str) -> bool:
        asked.append((item, line))
        return item.lower() in line.lower()

    rubric = ["Setup", "Tests", "Setup"]
    canonical = align(rubric, ["1. setup done", "2. more setup", "noise", "tests"], same)
    assert canonical == ["Setup", "Setup", "noise", "Tests"]
    assert asked == [
        ("Setup", "1. setup done"),
        ("Tests", "2. more setup"),
        ("Setup", "2. more setup"),
        ("Tests", "noise"),
        ("Tests", "tests"),
    ]


def test_response_lines_keep_blank_lines() -> None:
    assert response_lines("a\n\nb\n") == ["a", "", "b", ""]


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ('{"score": 1.0, "reason": "ok"}', {"score": 1.0, "reason": "ok"}),
        ('```json\n{"score": 0.5}\n```', {"score": 0.5}),
        ('Verdict: {"score": 0.0} done', {"score": 0.0}),
        ("```\n[1, 2]\n```", [1, 2]),
        ("no json here", None),
        ("{broken", None),
    ],
)
def test_judge_replies_are_read_as_the_official_parser_reads_them(
    reply: str, parsed: object
) -> None:
    assert parse_judge_reply(reply) == parsed


@pytest.mark.parametrize(
    ("parsed", "ability", "score"),
    [
        ({"score": 1.0}, "summarization", 1.0),
        ({"score": 0.5}, "summarization", 0.0),  # int(0.5): a partial counts nothing
        ({"score": 0.5}, "event_ordering", 0.5),  # float() there
        ({"score": "1"}, "abstention", 1.0),
        ({"score": "0.5"}, "abstention", None),  # int("0.5") fails
        ({"score": "0.5"}, "event_ordering", 0.5),
        ({"reason": "no score"}, "abstention", None),
        ([1], "abstention", None),
        (None, "abstention", None),
    ],
)
def test_item_scores_are_added_as_the_official_evaluator_adds_them(
    parsed: object, ability: str, score: float | None
) -> None:
    assert item_score(parsed, ability) == score


def test_judge_score_and_reported_score() -> None:
    assert judge_score([1.0, 0.0, None, 1.0]) == 0.5
    with pytest.raises(ValueError):
        judge_score([])
    ordering = ordering_score(["a", "b"], ["b", "a"])
    assert reported_score("event_ordering", 1.0, ordering) == ordering.tau_norm == 0.0
    assert reported_score("abstention", 0.25, None) == 0.25


def test_equivalence_rule() -> None:
    assert says_same_event("YES") and says_same_event("Eyes") and not says_same_event("No.")


def test_aggregate_means_questions_per_chat_then_chats() -> None:
    rows = [
        QuestionScore("100K-1", "abstention", 1.0),
        QuestionScore("100K-1", "abstention", 0.0),
        QuestionScore("100K-2", "abstention", 1.0),
        QuestionScore("100K-2", "abstention", 1.0),
        QuestionScore("100K-2", "abstention", 1.0),
        QuestionScore("100K-1", "event_ordering", 0.25),
    ]
    report = aggregate(rows)
    assert report.per_chat == {
        "100K-1": {"abstention": 0.5, "event_ordering": 0.25},
        "100K-2": {"abstention": 1.0},
    }
    # per chat first: (0.5 + 1.0) / 2, not the question mean 4/5
    assert report.per_ability == {"abstention": 0.75, "event_ordering": 0.25}
    assert list(report.per_ability) == ["abstention", "event_ordering"]
    assert report.overall == 0.5
    assert math.isnan(aggregate([]).overall)
