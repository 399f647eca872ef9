from __future__ import annotations

from lme_bench.backends.protocol import Hit
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view
from lme_bench.retrieval.official_ids import corpus_session_ids, corpus_turn_ids, evaluate_retrieval
from tests.factories import make_question


def _hit(key: str, index: int | None) -> Hit:
    return Hit("s", 1.0, "t", session_key=key, turn_index=index)


def _instance() -> Instance:
    # Date order: s000 = answer_4be1b6b4 (position 1), s001 = sharegpt filler (position 0).
    return Instance.model_validate(make_question())


def test_corpus_ids_are_official() -> None:
    instance = _instance()
    assert corpus_turn_ids(instance) == [
        "sharegpt_Ab3dE9x_0_1",
        "noans_4be1b6b4_1",
        "answer_4be1b6b4_3",
    ]
    assert corpus_session_ids(instance) == ["sharegpt_Ab3dE9x_0", "answer_4be1b6b4"]


def test_ranking_maps_keys_back_skips_assistant_and_untagged_entries() -> None:
    instance = _instance()
    _, keys = make_view(instance)
    hits = [_hit("s001", 0), _hit("s000", 1), _hit("s000", None), _hit("s000", 2), _hit("s000", 0)]
    session_row, turn_row = evaluate_retrieval(instance, keys, hits)
    assert turn_row.ranked_ids == ["sharegpt_Ab3dE9x_0_1", "answer_4be1b6b4_3", "noans_4be1b6b4_1"]
    assert session_row.ranked_ids == ["sharegpt_Ab3dE9x_0", "answer_4be1b6b4"]
    assert turn_row.metrics["recall_any@1"] == 0.0 and turn_row.metrics["recall_any@3"] == 1.0
    # DCG rewards rank 2 fully (rel_1 + rel_2 / log2(2)), as the official code does.
    assert turn_row.metrics["ndcg_any@3"] == 1.0
    assert session_row.metrics["recall_all@1"] == 0.0 and session_row.metrics["recall_all@3"] == 1.0
    assert (turn_row.n_evidence, session_row.n_evidence) == (1, 1)


def test_evidence_session_without_has_answer_user_turn_is_not_evidence() -> None:
    question = make_question()
    for turn in question["haystack_sessions"][1]:
        turn["has_answer"] = turn["role"] == "assistant"
    instance = Instance.model_validate(question)
    _, keys = make_view(instance)
    session_row, turn_row = evaluate_retrieval(instance, keys, [_hit("s000", 2)])
    assert session_row.ranked_ids == ["noans_4be1b6b4"]
    # The official quirk for questions without evidence: recall_any 0, recall_all 1.
    assert turn_row.metrics["recall_any@5"] == 0.0 and turn_row.metrics["recall_all@5"] == 1.0
    assert turn_row.n_evidence == 0


def test_repeated_session_ids_keyed_by_position() -> None:
    question = make_question(haystack_session_ids=["answer_4be1b6b4", "answer_4be1b6b4"])
    question["haystack_sessions"][0] = [
        dict(t, has_answer=False) for t in question["haystack_sessions"][0]
    ]
    instance = Instance.model_validate(question)
    _, keys = make_view(instance)
    session_row, turn_row = evaluate_retrieval(instance, keys, [_hit("s001", 0), _hit("s000", 2)])
    assert turn_row.ranked_ids == ["noans_4be1b6b4_1", "answer_4be1b6b4_3"]
    assert session_row.ranked_ids == ["noans_4be1b6b4", "answer_4be1b6b4"]
