"""The memory system's own calls during a stage's searches reach the rows: query embeddings of
a dense store in retrieval.parquet and hypotheses.parquet, none for BM25."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lme_bench.config.settings import load_settings
from lme_bench.embeddings import HASHING, forget_vectors
from lme_bench.results.summary import search_latency
from lme_bench.run.steps import (
    answer_question,
    evaluate_question,
    ingest_question,
    plan_run,
    prepare_questions,
    qa_panel,
)


@pytest.mark.parametrize("search", ["bm25", "dense"])
def test_query_embeddings_are_counted_per_stage(tmp_path: Path, search: str) -> None:
    settings = load_settings(
        None,
        **{
            "run.results_dir": str(tmp_path),
            "run.id": search,
            "memory.params": {"search": search},
            "memory.embedding_model": HASHING,  # the dependency-free test double
            "models.qa": "fake:quote-memory",
            "models.judge": "fake:match-judge",
        },
    )
    forget_vectors()  # other tests may have embedded the same sample texts in this process
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=2)
    # one question searched by retrieval, the other answered: each stage's searches embed
    # texts the shared embedder has not seen (a query seen before comes from its cache)
    outcomes = [asyncio.run(ingest_question(ref, settings, plan.run_id)) for ref in refs]
    rows = asyncio.run(evaluate_question(refs[0], outcomes[0], settings))
    answer = asyncio.run(answer_question(refs[1], outcomes[1].memory_id, qa_panel(settings)))
    assert answer.status == "ok"
    calls = {row.search_embedding_calls for row in rows}
    latency = search_latency(rows)
    assert latency is not None
    if search == "bm25":
        assert calls == {0} and answer.memory_embedding_calls == 0
        assert latency["embedding_calls"] == 0
    else:  # at least the query (the rows too, when this search was the store's first)
        assert len(calls) == 1 and calls.pop() >= 1  # one search, on both granularities' rows
        assert answer.memory_embedding_calls >= answer.searches >= 1
        assert latency["embedding_calls"] == rows[0].search_embedding_calls
    assert {row.search_model_calls for row in rows} == {0} and answer.memory_model_calls == 0
