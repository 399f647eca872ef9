"""Retrieval metrics: hand-computed cases and a cross-check against an index-based re-derivation
of the official LongMemEval evaluation."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from lme_bench.metrics.ranking_metrics import (
    K_VALUES,
    METRIC_NAMES,
    is_evidence,
    mean_metrics,
    official_session_id,
    official_turn_id,
    score_ranking,
    score_turn_ranking_at_session_level,
)

INV_LOG2_3 = 1 / math.log2(3)  # 0.6309297535714575, weight of rank 3
INV_LOG2_5 = 1 / math.log2(5)  # 0.43067655807339306, weight of rank 5


def triple(scores: dict[str, float], k: int) -> tuple[float, float, float]:
    return scores[f"recall_any@{k}"], scores[f"recall_all@{k}"], scores[f"ndcg_any@{k}"]


# ----------------------------------------------------------------------------- names and ids


def test_metric_names_in_k_order() -> None:
    assert K_VALUES == (1, 3, 5, 10, 30, 50)
    assert len(METRIC_NAMES) == 18
    assert METRIC_NAMES[:3] == ("recall_any@1", "recall_all@1", "ndcg_any@1")
    assert METRIC_NAMES[-3:] == ("recall_any@50", "recall_all@50", "ndcg_any@50")
    assert set(score_ranking(["a"], ["a"])) == set(METRIC_NAMES)


def test_is_evidence_is_a_substring_rule() -> None:
    assert is_evidence("answer_4be1b6b4_2")
    assert is_evidence("answer_4be1b6b4_2_7")
    assert is_evidence("xx_answer_yy")
    assert not is_evidence("noans_4be1b6b4_2")
    assert not is_evidence("sharegpt_abc_1")
    assert not is_evidence("Answer_abc")  # case-sensitive, like the official `in`


def test_official_session_id_noans_rule() -> None:
    assert official_session_id("answer_4be1b6b4_2", True) == "answer_4be1b6b4_2"
    assert official_session_id("answer_4be1b6b4_2", False) == "noans_4be1b6b4_2"
    # fillers are never renamed
    assert official_session_id("sharegpt_abc", False) == "sharegpt_abc"
    assert official_session_id("5e2a_1", False) == "5e2a_1"


def test_official_turn_id_noans_rule() -> None:
    session = "answer_4be1b6b4_2"
    assert official_turn_id(session, 7, "user", True) == "answer_4be1b6b4_2_7"
    assert official_turn_id(session, 5, "user", False) == "noans_4be1b6b4_2_5"
    # assistant turns are never evidence, even when flagged
    assert official_turn_id(session, 8, "assistant", True) == "noans_4be1b6b4_2_8"
    assert official_turn_id(session, 6, "assistant", False) == "noans_4be1b6b4_2_6"
    # outside answer sessions the id is just session + turn number
    assert official_turn_id("5e2a_1", 2, "assistant", False) == "5e2a_1_2"
    assert official_turn_id("sharegpt_abc", 1, "user", False) == "sharegpt_abc_1"


def test_perfect_ranking() -> None:
    corpus = ["answer_a", "s1", "s2", "s3"]
    scores = score_ranking(["answer_a", "s1", "s2", "s3"], corpus)
    assert scores == {name: 1.0 for name in METRIC_NAMES}


def test_evidence_at_ranks_two_and_three() -> None:
    corpus = ["s1", "answer_a", "answer_b", "s2", "s3"]
    scores = score_ranking(["s1", "answer_a", "answer_b", "s2", "s3"], corpus)
    assert triple(scores, 1) == (0.0, 0.0, 0.0)
    # DCG@3 = 0 + 1/log2(2) + 1/log2(3) = 1.6309297535714575
    # ideal relevances [1, 1, 0]: IDCG@3 = 1 + 1/log2(2) = 2  ->  nDCG@3 = 0.8154648767857288
    assert triple(scores, 3) == pytest.approx((1.0, 1.0, 0.8154648767857288))
    assert triple(scores, 3)[2] == pytest.approx((1 + INV_LOG2_3) / 2)
    # nothing changes further down: same DCG, IDCG stays 2
    assert triple(scores, 5) == pytest.approx((1.0, 1.0, 0.8154648767857288))
    assert triple(scores, 50) == pytest.approx((1.0, 1.0, 0.8154648767857288))


def test_recall_all_versus_recall_any() -> None:
    corpus = ["answer_a", "s1", "s2", "answer_b", "s3", "s4"]
    scores = score_ranking(["answer_a", "s1", "s2", "answer_b", "s3", "s4"], corpus)
    assert triple(scores, 1) == (1.0, 0.0, 1.0)
    # DCG@3 = 1, IDCG@3 = 1 + 1 = 2
    assert triple(scores, 3) == pytest.approx((1.0, 0.0, 0.5))
    # DCG@5 = 1 + 1/log2(4) = 1.5, IDCG@5 = 2
    assert triple(scores, 5) == pytest.approx((1.0, 1.0, 0.75))


def test_k_larger_than_ranking_and_rank_two_weighs_one() -> None:
    corpus = ["answer_a"] + [f"filler_{i}" for i in range(59)]
    scores = score_ranking(["filler_0", "answer_a"], corpus)
    assert triple(scores, 1) == (0.0, 0.0, 0.0)
    # rank 2 is discounted by log2(2) = 1, so a single evidence at rank 2 scores a full nDCG
    for k in (3, 5, 10, 30, 50):
        assert triple(scores, k) == (1.0, 1.0, 1.0)
    scores = score_ranking(["filler_0", "filler_1", "answer_a"], corpus)
    assert triple(scores, 50) == pytest.approx((1.0, 1.0, INV_LOG2_3))
    assert score_ranking([], corpus)["recall_any@50"] == 0.0
    assert score_ranking([], corpus)["ndcg_any@50"] == 0.0


def test_no_evidence_quirk() -> None:
    corpus = ["noans_a", "s1", "s2"]
    scores = score_ranking(["s1", "noans_a", "s2"], corpus)
    for k in K_VALUES:
        assert triple(scores, k) == (0.0, 1.0, 0.0)
    assert score_ranking([], []) == {
        name: (1.0 if name.startswith("recall_all") else 0.0) for name in METRIC_NAMES
    }


def test_answer_session_without_has_answer_user_turn_is_not_evidence() -> None:
    # session level: the only answer session has has_answer on no user turn -> no evidence at all
    corpus = [official_session_id("answer_4be1b6b4_2", False), "sharegpt_x", "5e2a_1"]
    assert corpus[0] == "noans_4be1b6b4_2"
    scores = score_ranking(corpus, corpus)
    assert triple(scores, 1) == (0.0, 1.0, 0.0)
    # turn level: the same session's user turns all become noans
    turns = [
        official_turn_id("answer_4be1b6b4_2", 1, "user", False),
        official_turn_id("answer_4be1b6b4_2", 3, "user", False),
        official_turn_id("sharegpt_x", 1, "user", False),
    ]
    assert turns == ["noans_4be1b6b4_2_1", "noans_4be1b6b4_2_3", "sharegpt_x_1"]
    assert triple(score_ranking(turns, turns), 5) == (0.0, 1.0, 0.0)
    assert triple(score_turn_ranking_at_session_level(turns, turns), 5) == (0.0, 1.0, 0.0)


def test_assistant_turns_in_answer_sessions_are_renamed_and_not_in_corpus() -> None:
    # user turns 1 and 3 make the corpus; turn 2 is an assistant turn with has_answer set
    corpus = [
        official_turn_id("answer_a", 1, "user", True),
        official_turn_id("s_1", 1, "user", False),
        official_turn_id("s_1", 3, "user", False),
    ]
    assistant = official_turn_id("answer_a", 2, "assistant", True)
    assert assistant == "noans_a_2"
    ranked = ["s_1_2", assistant, "answer_a_1", "s_1_1", "s_1_3"]
    scores = score_ranking(ranked, corpus)
    assert triple(scores, 1) == (0.0, 0.0, 0.0)
    # evidence at rank 3: DCG = 1/log2(3); a single evidence entry gives IDCG = 1
    assert triple(scores, 3) == pytest.approx((1.0, 1.0, INV_LOG2_3))


def test_ranked_ids_outside_the_corpus_keep_their_own_relevance() -> None:
    corpus = ["answer_a_1", "s_1"]
    # an evidence-looking id that is not in the corpus is relevant for the DCG ...
    scores = score_ranking(["answer_zz_9"], corpus)
    assert scores["ndcg_any@1"] == 1.0
    # ... but it is not corpus evidence, so it recalls nothing
    assert scores["recall_any@1"] == 0.0
    assert scores["recall_all@1"] == 0.0
    # a non-evidence outsider just takes a rank
    scores = score_ranking(["s_2", "s_4", "answer_a_1"], corpus)
    assert triple(scores, 3) == pytest.approx((1.0, 1.0, INV_LOG2_3))


def test_duplicate_ids_count_at_each_rank() -> None:
    # the same evidence session twice in the haystack: two corpus entries, one evidence id
    corpus = ["answer_a", "s1", "answer_a", "s2"]
    scores = score_ranking(["answer_a", "s1", "answer_a", "s2"], corpus)
    assert triple(scores, 1) == (1.0, 1.0, 1.0)
    # DCG@3 = 1 + 0 + 1/log2(3); ideal relevances [1, 1, 0] give IDCG@3 = 2
    assert triple(scores, 3) == pytest.approx((1.0, 1.0, (1 + INV_LOG2_3) / 2))
    assert triple(scores, 3)[2] == pytest.approx(0.8154648767857288)


def test_cutoffs_must_be_positive() -> None:
    with pytest.raises(ValueError):
        score_ranking(["a"], ["a"], k_values=(0,))
    with pytest.raises(ValueError):
        score_turn_ranking_at_session_level(["a_1"], ["a_1"], k_values=(-1,))


# ------------------------------------------------------- session level from a turn ranking


def test_turn_ranking_at_session_level_grows_effective_k() -> None:
    corpus = [
        "s_1_1",
        "s_1_3",
        "answer_e_1",
        "answer_e_3",
        "t_1_1",
        "noans_f_1",  # user turn of answer session "answer_f" without has_answer
        "answer_f_5",
    ]
    ranked = ["answer_e_3", "answer_e_1", "s_1_1", "s_1_3", "answer_f_5", "t_1_1", "noans_f_1"]
    # sessions by rank: answer_e answer_e s_1 s_1 answer_f t_1 noans_f
    # distinct sessions per prefix: 1 1 2 2 3 4 5; corpus: 7 turns, 3 of them evidence
    scores = score_turn_ranking_at_session_level(ranked, corpus)
    # k=1: effective k 1 -> DCG 1, IDCG 1
    assert triple(scores, 1) == (1.0, 0.0, 1.0)
    # k=3: effective k 5 -> DCG = 1 + 1/log2(2) + 1/log2(5) = 2.430676558073393
    #      ideal [1, 1, 1, 0, 0]: IDCG = 1 + 1 + 1/log2(3) = 2.6309297535714578
    expected = (2 + INV_LOG2_5) / (2 + INV_LOG2_3)
    assert expected == pytest.approx(0.9238850086262381)
    assert triple(scores, 3) == pytest.approx((1.0, 1.0, expected))
    # k=5: effective k 7 (whole ranking), same DCG and IDCG
    assert triple(scores, 5) == pytest.approx((1.0, 1.0, expected))
    # k=10 > 7 corpus turns: effective k stays 10, everything is in
    assert triple(scores, 10) == pytest.approx((1.0, 1.0, expected))
    # the plain turn-level score differs: top 3 turns miss answer_f_5
    # DCG@3 = 1 + 1 = 2, IDCG@3 = 2 + 1/log2(3)
    turn_scores = score_ranking(ranked, corpus)
    assert triple(turn_scores, 3) == pytest.approx((1.0, 0.0, 2 / (2 + INV_LOG2_3)))
    assert triple(turn_scores, 3)[2] == pytest.approx(0.7601875334318685)


def test_turn_ranking_at_session_level_with_underscored_session_ids() -> None:
    corpus = ["answer_4be1b6b4_2_1", "noans_4be1b6b4_2_3", "5e2a_1_1", "5e2a_1_3", "5e2a_2_1"]
    ranked = ["5e2a_1_3", "5e2a_1_1", "noans_4be1b6b4_2_3", "answer_4be1b6b4_2_1", "5e2a_2_1"]
    scores = score_turn_ranking_at_session_level(ranked, corpus, k_values=(1, 2, 3))
    # sessions: 5e2a_1 5e2a_1 noans_4be1b6b4_2 answer_4be1b6b4_2 5e2a_2
    assert triple(scores, 1) == (0.0, 0.0, 0.0)
    # k=2 -> effective k 3: no evidence yet
    assert triple(scores, 2) == (0.0, 0.0, 0.0)
    # k=3 -> effective k 4: evidence at rank 4, DCG = 1/log2(4) = 0.5, IDCG = 1
    assert triple(scores, 3) == pytest.approx((1.0, 1.0, 0.5))


def test_effective_k_is_bounded_by_corpus_size_plus_one() -> None:
    # corpus: user turns only (3); the ranking also holds assistant turns (6 entries)
    corpus = ["x_1_1", "x_1_3", "answer_a_1"]
    ranked = ["x_1_2", "x_1_4", "x_1_1", "x_1_3", "answer_a_1", "noans_a_2"]
    scores = score_turn_ranking_at_session_level(ranked, corpus, k_values=(1, 3, 5))
    assert triple(scores, 1) == (0.0, 0.0, 0.0)
    # k=3 <= 3 corpus turns: growth stops at 3 + 1 = 4 ranks, before reaching answer_a
    assert triple(scores, 3) == (0.0, 0.0, 0.0)
    # k=5 > 3 corpus turns: effective k stays 5, answer_a at rank 5 counts
    # DCG = 1/log2(5); ideal over the 3 corpus turns [1, 0, 0] -> IDCG = 1
    assert triple(scores, 5) == pytest.approx((1.0, 1.0, INV_LOG2_5))


def test_duplicate_sessions_count_per_turn_at_session_level() -> None:
    corpus = ["answer_a_1", "answer_a_3", "s_1_1", "t_1_1"]
    ranked = ["answer_a_1", "answer_a_3", "s_1_1", "t_1_1"]
    scores = score_turn_ranking_at_session_level(ranked, corpus, k_values=(1, 2))
    assert triple(scores, 1) == (1.0, 1.0, 1.0)
    # k=2 -> effective k 3; both turns of answer_a count: DCG = 1 + 1 = 2 = IDCG
    assert triple(scores, 2) == (1.0, 1.0, 1.0)
    ranked = ["answer_a_1", "s_1_1", "answer_a_3", "t_1_1"]
    scores = score_turn_ranking_at_session_level(ranked, corpus, k_values=(2,))
    # effective k 2: DCG = 1, IDCG = 2 (two evidence turns in the corpus)
    assert triple(scores, 2) == (1.0, 1.0, 0.5)


# -------------------------------------------------------------------------------- averages


def test_mean_metrics() -> None:
    rows = [
        {"recall_any@1": 1.0, "recall_all@1": 0.0, "ndcg_any@1": 1.0},
        {"recall_any@1": 0.0, "recall_all@1": 0.0, "ndcg_any@1": 0.25},
        {"recall_any@1": 1.0, "recall_all@1": 1.0},
    ]
    names = ("recall_any@1", "recall_all@1", "ndcg_any@1")
    means = mean_metrics(rows, names)
    # ndcg_any@1 is missing from a row, so it is left out (like the official averaging)
    assert means == pytest.approx({"recall_any@1": 2 / 3, "recall_all@1": 1 / 3})
    assert mean_metrics(rows[:2], names) == pytest.approx(
        {"recall_any@1": 0.5, "recall_all@1": 0.0, "ndcg_any@1": 0.625}
    )
    assert mean_metrics([]) == {}
    assert mean_metrics(iter([score_ranking(["answer_a"], ["answer_a"])])) == {
        name: 1.0 for name in METRIC_NAMES
    }


def test_mean_of_many_values() -> None:
    rng = random.Random(7)
    values = [rng.random() for _ in range(1000)]
    mean = mean_metrics([{"m": v} for v in values], names=("m",))["m"]
    assert mean == pytest.approx(math.fsum(values) / len(values), rel=1e-14)


# ---------------------------------------------- cross-check against the official algorithm
#
# An independent, index-based re-derivation of the official procedure: rankings are indices into
# corpus_ids, correct_docs is the list of distinct evidence ids of the corpus.


def ref_dcg(relevances: Sequence[int], cutoff: int) -> float:
    head = list(relevances[:cutoff])
    if not head:
        return 0.0
    return head[0] + sum(head[pos] / math.log2(pos + 1) for pos in range(1, len(head)))


def ref_evaluate(
    rankings: Sequence[int], correct_docs: Sequence[str], corpus_ids: Sequence[str], k: int
) -> tuple[float, float, float]:
    found = {corpus_ids[index] for index in rankings[:k]}
    any_hit = float(any(doc in found for doc in correct_docs))
    all_hit = float(all(doc in found for doc in correct_docs))
    relevance = [int(doc in correct_docs) for doc in corpus_ids]
    ideal = ref_dcg(sorted(relevance, reverse=True), k)
    actual = ref_dcg([relevance[index] for index in rankings[:k]], k)
    return any_hit, all_hit, (0.0 if ideal == 0 else actual / ideal)


def ref_strip(turn_id: str) -> str:
    pieces = turn_id.split("_")
    return "_".join(pieces[: len(pieces) - 1])


def ref_turn2session(
    rankings: Sequence[int], correct_docs: Sequence[str], corpus_ids: Sequence[str], k: int
) -> tuple[float, float, float]:
    session_correct = sorted({ref_strip(doc) for doc in correct_docs})
    session_corpus = [ref_strip(doc) for doc in corpus_ids]
    cutoff = k
    while (
        cutoff <= len(session_corpus)
        and len({session_corpus[index] for index in rankings[:cutoff]}) < k
    ):
        cutoff += 1
    return ref_evaluate(rankings, session_correct, session_corpus, cutoff)


@dataclass
class Turn:
    role: str
    has_answer: bool


def ref_corpus_ids(sessions: Sequence[tuple[str, Sequence[Turn]]], granularity: str) -> list[str]:
    """Corpus ids built the way the official indexing does it."""
    ids: list[str] = []
    for session_id, turns in sessions:
        user_turns = [turn for turn in turns if turn.role == "user"]
        if granularity == "session":
            demote = "answer" in session_id and all(not t.has_answer for t in user_turns)
            ids.append(session_id.replace("answer", "noans") if demote else session_id)
            continue
        for position, turn in enumerate(turns, start=1):
            if turn.role != "user":
                continue
            turn_id = f"{session_id}_{position}"
            if "answer" in session_id and not turn.has_answer:
                turn_id = turn_id.replace("answer", "noans")
            ids.append(turn_id)
    return ids


def our_corpus_ids(sessions: Sequence[tuple[str, Sequence[Turn]]], granularity: str) -> list[str]:
    ids: list[str] = []
    for session_id, turns in sessions:
        if granularity == "session":
            has = any(t.has_answer for t in turns if t.role == "user")
            ids.append(official_session_id(session_id, has))
            continue
        for position, turn in enumerate(turns, start=1):
            if turn.role == "user":
                ids.append(official_turn_id(session_id, position, turn.role, turn.has_answer))
    return ids


def random_haystack(rng: random.Random) -> list[tuple[str, list[Turn]]]:
    def fresh_id() -> str:
        hexa = f"{rng.getrandbits(32):08x}"
        return rng.choice(
            [
                f"answer_{hexa}",
                f"answer_{hexa}_{rng.randint(1, 4)}",
                f"sharegpt_{hexa}",
                f"ultrachat_{rng.randint(0, 99999)}",
                f"{hexa}_{rng.randint(1, 3)}",
            ]
        )

    sessions: list[tuple[str, list[Turn]]] = []
    for _ in range(rng.randint(1, 9)):
        # session ids can repeat inside one haystack
        repeat = bool(sessions) and rng.random() < 0.1
        session_id = rng.choice(sessions)[0] if repeat else fresh_id()
        turns: list[Turn] = []
        for position in range(rng.randint(1, 8)):
            role = "user" if position % 2 == 0 or rng.random() < 0.1 else "assistant"
            turns.append(Turn(role, "answer" in session_id and rng.random() < 0.35))
        sessions.append((session_id, turns))
    return sessions


def test_cross_check_against_index_based_official_algorithm() -> None:
    rng = random.Random(20250101)
    k_values = (*K_VALUES, 2, 4, 7, 12)
    checked = {"session": 0, "turn": 0, "no_evidence": 0}
    for _ in range(200):
        sessions = random_haystack(rng)
        for granularity in ("session", "turn"):
            corpus_ids = ref_corpus_ids(sessions, granularity)
            assert our_corpus_ids(sessions, granularity) == corpus_ids
            correct_docs = sorted({doc for doc in corpus_ids if "answer" in doc})
            checked["no_evidence"] += not correct_docs
            rankings = list(range(len(corpus_ids)))
            rng.shuffle(rankings)
            if rng.random() < 0.2:  # a retriever may also return only a prefix
                rankings = rankings[: rng.randint(0, len(rankings))]
            ranked_ids = [corpus_ids[index] for index in rankings]

            ours = score_ranking(ranked_ids, corpus_ids, k_values)
            for k in k_values:
                expected = ref_evaluate(rankings, correct_docs, corpus_ids, k)
                assert triple(ours, k) == pytest.approx(expected, rel=1e-12, abs=1e-12)
            checked[granularity] += 1

            if granularity == "turn":
                ours = score_turn_ranking_at_session_level(ranked_ids, corpus_ids, k_values)
                for k in k_values:
                    expected = ref_turn2session(rankings, correct_docs, corpus_ids, k)
                    assert triple(ours, k) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert checked["session"] == checked["turn"] == 200
    assert checked["no_evidence"] > 0


def test_ndcg_and_mean_are_bit_identical_to_numpy() -> None:
    """The official code sums with NumPy; our sums follow the same order."""
    np = pytest.importorskip("numpy")

    def numpy_dcg(relevances: Sequence[float], cutoff: int) -> float:
        head = np.asarray(relevances, dtype=np.float64)[:cutoff]
        if not head.size:
            return 0.0
        return float(head[0] + np.sum(head[1:] / np.log2(np.arange(2, head.size + 1))))

    rng = random.Random(99)
    per_question: list[dict[str, float]] = []
    for _ in range(300):
        size = rng.randint(1, 400)
        corpus = [("answer_" if rng.random() < 0.1 else "s_") + str(i) for i in range(size)]
        order = list(range(size))
        rng.shuffle(order)
        k_values = (1, 3, 5, 10, 30, 50, 100, 200, 300)
        scores = score_ranking([corpus[i] for i in order], corpus, k_values)
        relevance = [float("answer" in doc) for doc in corpus]
        for k in k_values:
            ideal = numpy_dcg(sorted(relevance, reverse=True), k)
            actual = numpy_dcg([relevance[i] for i in order], k)
            assert scores[f"ndcg_any@{k}"] == (0.0 if ideal == 0 else actual / ideal)
        per_question.append(scores)
    means = mean_metrics(per_question)
    for name in METRIC_NAMES:
        assert means[name] == float(np.mean([row[name] for row in per_question]))
