"""Each question's turn ranking holds every non-empty user turn of its haystack, in every search
mode, and the metrics of those full rankings (empty turns included or not) are the same."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.backends.entry_system import entry_hit
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.shards import QuestionRef
from lme_bench.dataset.views import make_view
from lme_bench.ingest.as_they_are import session_entries
from lme_bench.ingest.question import IngestOutcome
from lme_bench.metrics.ranking_metrics import (
    mean_metrics,
    score_ranking,
    score_turn_ranking_at_session_level,
)
from lme_bench.results.summary import summarize_retrieval
from lme_bench.retrieval.official_ids import RetrievalRow, corpus_turn_ids, evaluate_retrieval
from lme_bench.run.steps import evaluate_question, ingest_question, plan_run, prepare_questions
from tests.factories import make_question

Ingested = tuple[Settings, list[QuestionRef], list[IngestOutcome]]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    results = tmp_path_factory.mktemp("full")
    settings = load_settings(None, **{"run.results_dir": str(results), "run.id": "full"})
    plan = plan_run(settings)
    _, refs = prepare_questions(plan)
    outcomes = [asyncio.run(ingest_question(ref, settings, plan.run_id)) for ref in refs]
    return settings, refs, outcomes


def _nonempty_user_turns(instance: Instance) -> list[str]:
    ids = corpus_turn_ids(instance)
    user_turns = [t for s in instance.haystack_sessions for t in s if t.role == "user"]
    return [i for i, t in zip(ids, user_turns, strict=True) if t.content.strip()]


def _rows(settings: Settings, ref: QuestionRef, outcome: IngestOutcome) -> dict[str, RetrievalRow]:
    rows = asyncio.run(evaluate_question(ref, outcome, settings))
    return {row.granularity: replace(row, search_seconds=0.0) for row in rows}  # timing apart


def _mode(settings: Settings, search: str, alpha: float) -> Settings:
    memory: dict[str, Any] = {
        "params": {**settings.memory.params, "search": search, "alpha": alpha}
    }
    if search != "bm25":
        memory["embedding_model"] = "hashing-trigram-256"
    return settings.model_copy(update={"memory": settings.memory.model_copy(update=memory)})


def test_every_sample_question_ranks_every_nonempty_user_turn(ingested: Ingested) -> None:
    settings, refs, outcomes = ingested
    assert settings.retrieval.top_k >= max(ref.n_turns for ref in refs)
    for ref, outcome in zip(refs, outcomes, strict=True):
        turn = _rows(settings, ref, outcome)["turn"]
        expected = _nonempty_user_turns(ref.load())
        assert Counter(turn.ranked_ids) == Counter(expected), ref.question_id


@pytest.mark.parametrize(("search", "alpha"), [("dense", 0.6), ("hybrid", 0.0), ("hybrid", 0.6)])
def test_dense_and_hybrid_rank_every_user_turn(
    ingested: Ingested, search: str, alpha: float
) -> None:
    settings, refs, outcomes = ingested
    mode = _mode(settings, search, alpha)
    for ref, outcome in list(zip(refs, outcomes, strict=True))[:4]:
        turn = _rows(mode, ref, outcome)["turn"]
        assert Counter(turn.ranked_ids) == Counter(_nonempty_user_turns(ref.load()))


def test_hybrid_alpha_0_ranks_like_bm25(ingested: Ingested) -> None:
    settings, refs, outcomes = ingested
    for ref, outcome in list(zip(refs, outcomes, strict=True))[:4]:
        bm25 = _rows(settings, ref, outcome)["turn"]
        assert _rows(_mode(settings, "hybrid", 0.0), ref, outcome)["turn"] == bm25


def test_recall_all_at_50_is_1_where_there_are_at_most_50_user_turns(ingested: Ingested) -> None:
    settings, refs, outcomes = ingested
    small = [
        (ref, outcome)
        for ref, outcome in zip(refs, outcomes, strict=True)
        if not ref.is_abstention and len(corpus_turn_ids(ref.load())) <= 50
    ]
    assert small
    for ref, outcome in small:
        for row in _rows(settings, ref, outcome).values():
            assert row.metrics["recall_all@50"] == 1.0, (ref.question_id, row.granularity)


def test_a_repeated_session_is_ranked_twice_as_in_the_official_corpus(tmp_path: Path) -> None:
    question = make_question(
        haystack_session_ids=["sharegpt_Ab3dE9x_0", "answer_4be1b6b4", "sharegpt_Ab3dE9x_0"],
        haystack_dates=[
            "2023/05/20 (Sat) 10:00",
            "2023/05/01 (Mon) 09:15",
            "2023/05/25 (Thu) 08:00",
        ],
    )
    question["haystack_sessions"].append(question["haystack_sessions"][0])
    turn = _ranked_by_the_store(tmp_path, Instance.model_validate(question))["turn"]
    assert Counter(turn.ranked_ids) == Counter(corpus_turn_ids(Instance.model_validate(question)))
    assert turn.ranked_ids.count("sharegpt_Ab3dE9x_0_1") == 2


def _ranked_by_the_store(path: Path, instance: Instance) -> dict[str, RetrievalRow]:
    """Raw-ingest one question into a fresh store and score a BM25 search of its question."""
    view, keys = make_view(instance)
    backend = EmbeddedEntryStore(path / "memory.sqlite")
    memory = backend.store.get_or_create_memory(backend.store.get_or_create_vault("v"), "q__r")
    for session in view.sessions:
        backend.store.add_entries(memory, session_entries(session))
    found = backend.store.search(memory, instance.question, top_ke=1000, top_kc=0)
    hits = [entry_hit(hit) for hit in found.entries]
    backend.store.close()
    return {row.granularity: row for row in evaluate_retrieval(instance, keys, hits)}


def test_empty_turns_are_not_ranked_and_change_no_metric(tmp_path: Path) -> None:
    question = make_question()
    sessions = question["haystack_sessions"]
    sessions[0].insert(1, {"role": "user", "content": "  "})
    sessions[1].insert(0, {"role": "user", "content": "", "has_answer": False})
    instance = Instance.model_validate(question)
    corpus = corpus_turn_ids(instance)
    empty = ["sharegpt_Ab3dE9x_0_2", "noans_4be1b6b4_1"]
    assert set(empty) <= set(corpus)
    rows = _ranked_by_the_store(tmp_path, instance)
    ranked = rows["turn"].ranked_ids
    assert Counter(ranked) == Counter(c for c in corpus if c not in empty)
    # The official retriever would rank the empty turns too, among the non-matches: put them
    # anywhere after the last evidence turn and every figure is the same.
    last_evidence = max(i for i, c in enumerate(ranked) if "answer" in c)
    for at in range(last_evidence + 1, len(ranked) + 1):
        full = [*ranked[:at], *empty, *ranked[at:]]
        assert score_ranking(full, corpus) == rows["turn"].metrics
        assert score_turn_ranking_at_session_level(full, corpus) == rows["session"].metrics


def test_the_second_average_keeps_the_questions_run_retrieval_keeps(ingested: Ingested) -> None:
    settings, refs, outcomes = ingested
    rows = [
        row
        for ref, outcome in zip(refs, outcomes, strict=True)
        for row in _rows(settings, ref, outcome).values()
    ]
    kept = {  # run_retrieval.py: not `_abs`, and some user turn has `has_answer`
        ref.question_id
        for ref in refs
        if "_abs" not in ref.question_id
        and any(t.has_answer for s in ref.load().haystack_sessions for t in s if t.role == "user")
    }
    assert 0 < len(kept) < sum(not ref.is_abstention for ref in refs)
    summary = summarize_retrieval(rows)
    for granularity in ("session", "turn"):
        mine = [r for r in rows if r.granularity == granularity and r.question_id in kept]
        evidenced = summary[granularity]["with_user_evidence"]["overall"]
        assert evidenced == {"n": len(kept), **mean_metrics([r.metrics for r in mine])}
