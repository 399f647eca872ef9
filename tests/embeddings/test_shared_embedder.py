"""The process's shared embedder: one model per name, a bounded cache of its vectors by text,
and counts per caller (calls that reached the model, texts it embedded, cache hits)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from lme_bench.backends.configured import open_system
from lme_bench.backends.protocol import Session, Turn
from lme_bench.config.settings import load_settings
from lme_bench.embeddings import (
    HASHING,
    CountingEmbedder,
    EmbeddingCounts,
    HashingEmbedder,
    SharedModel,
    embedding_counts,
    load_embedder,
)


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, keeping each batch it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return super().embed(texts)


def test_misses_go_to_the_model_in_one_batch_and_repeats_come_from_the_cache() -> None:
    model = RecordingEmbedder()
    view = CountingEmbedder(SharedModel(model))
    vectors = view.embed(["a dog", "a cat", "a dog", "a bird"])
    assert model.batches == [["a dog", "a cat", "a bird"]]
    assert vectors == HashingEmbedder().embed(["a dog", "a cat", "a dog", "a bird"])
    assert view.counts == EmbeddingCounts(calls=1, texts=3, cache_hits=1)
    assert view.embed(["a cat", "a fish"]) == HashingEmbedder().embed(["a cat", "a fish"])
    assert model.batches[1:] == [["a fish"]]
    assert view.counts == EmbeddingCounts(calls=2, texts=4, cache_hits=2)
    view.embed(["a bird"])  # all cached: no call reaches the model
    assert view.counts == EmbeddingCounts(calls=2, texts=4, cache_hits=3)
    assert view.embed([]) == [] and len(model.batches) == 2


def test_each_view_counts_its_own_calls_and_the_model_counts_them_all() -> None:
    shared = SharedModel(RecordingEmbedder())
    first, second = CountingEmbedder(shared), CountingEmbedder(shared)
    first.embed(["golden retriever", "teal colour"])
    second.embed(["golden retriever", "sourdough"])
    assert first.counts == EmbeddingCounts(calls=1, texts=2, cache_hits=0)
    assert second.counts == EmbeddingCounts(calls=1, texts=1, cache_hits=1)
    assert shared.totals == first.counts + second.counts


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    model = RecordingEmbedder()
    view = CountingEmbedder(SharedModel(model, capacity=2))
    view.embed(["one", "two"])
    view.embed(["one"])  # "one" is now the most recent
    view.embed(["three"])  # evicts "two"
    assert len(view.shared) == 2
    view.embed(["one", "two"])
    assert model.batches[-1] == ["two"]
    view.shared.forget()
    view.embed(["one"])
    assert len(view.shared) == 1 and model.batches[-1] == ["one"]
    with pytest.raises(ValueError, match="capacity"):
        SharedModel(model, capacity=-1)


def test_load_embedder_shares_one_model_per_name_and_starts_each_view_at_zero() -> None:
    first, second = load_embedder(HASHING), load_embedder(HASHING)
    assert first is not second and first.shared is second.shared
    assert (first.name, first.dim) == (HASHING, 256)
    first.embed(["a text only this test embeds, once"])
    assert second.counts == EmbeddingCounts()
    second.embed(["a text only this test embeds, once"])
    assert second.counts == EmbeddingCounts(calls=0, texts=0, cache_hits=1)
    assert embedding_counts(None) == EmbeddingCounts() == embedding_counts(HashingEmbedder())


def _session(key: str, *texts: str) -> Session:
    turns = tuple(Turn(i, "user", text) for i, text in enumerate(texts))
    return Session(key=key, date="2023/05/20 (Sat) 02:21", turns=turns)


@pytest.mark.parametrize("search", ["bm25", "hybrid"])
def test_the_embedded_systems_usage_counts_its_stores_embeddings(
    tmp_path: Path, search: str
) -> None:
    settings = load_settings(
        None,
        **{
            "run.results_dir": str(tmp_path),
            "memory.params": {"search": search},
            "memory.embedding_model": HASHING,
        },
    )

    async def ingest_and_search() -> tuple[int, int]:
        system = open_system(settings)
        memory = await system.open_memory(f"usage-{search}")
        await system.ingest_session(
            memory, _session("s1", "I walk Biscuit at dawn.", "Biscuit is a beagle.")
        )
        await system.ingest_session(memory, _session("s2", "My sister lives in Porto."))
        await system.search(memory, "What breed is my dog?", question_date="2023/05/21", k=5)
        await system.search(memory, "Where does my sister live?", question_date="2023/05/21", k=5)
        usage = system.usage()
        await system.close()
        return usage.embedding_calls, usage.embedded_texts

    calls, texts = asyncio.run(ingest_and_search())
    if search == "bm25":
        assert (calls, texts) == (0, 0)
    else:
        # the three rows in one call at the first search (texts no other test embeds), then
        # each of the two queries
        assert (calls, texts) == (3, 5)
