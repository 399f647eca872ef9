"""Every search mode ranks the whole memory: its own ranking, then the rest oldest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.embeddings import HashingEmbedder
from lme_bench.entries.models import EntryHit, NewEntry
from lme_bench.reference_memory.store import EmbeddedStore

TEXTS = [
    "We baked sourdough bread with rye flour on Sunday.",  # no query word
    "My golden retriever puppy loves the park.",
    "I switched my phone plan to a cheaper one.",  # no query word
    "Retriever breeds need a lot of exercise in the park.",
    "My favourite colour is teal, like the sea.",  # no query word
    "The park near my flat has a lake and a golden bridge.",
]
QUERY = "Where does my golden retriever play in the park?"
NOT_MATCHING = [TEXTS[0], TEXTS[2], TEXTS[4]]
MODES = [("bm25", 0.6), ("dense", 0.6), ("hybrid", 0.0), ("hybrid", 0.6)]


def _store(path: Path, search: str = "bm25", alpha: float = 0.6) -> EmbeddedStore:
    embedder = HashingEmbedder() if search != "bm25" else None
    return EmbeddedStore(path, search=search, alpha=alpha, embedder=embedder)


def _memory(store: EmbeddedStore) -> str:
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "q__r")
    store.add_entries(memory, [NewEntry(raw_entry=t, summary=t) for t in TEXTS])
    return memory


def _hits(store: EmbeddedStore, memory: str, query: str, k: int = 100) -> list[EntryHit]:
    return store.search(memory, query, top_ke=k, top_kc=0).entries


@pytest.mark.parametrize(("search", "alpha"), MODES)
def test_every_mode_ranks_every_entry(tmp_path: Path, search: str, alpha: float) -> None:
    path = tmp_path / "m.sqlite"
    memory = _memory(EmbeddedStore(path))
    store = _store(path, search, alpha)
    hits = _hits(store, memory, QUERY)
    assert sorted(h.summary for h in hits) == sorted(TEXTS)
    assert len({h.entry_id for h in hits}) == len(TEXTS)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    # Cut at top_ke: the first entries of the full ranking.
    assert [h.entry_id for h in _hits(store, memory, QUERY, k=4)] == [h.entry_id for h in hits[:4]]
    # The same search twice gives the same ranking and scores.
    again = _hits(_store(path, search, alpha), memory, QUERY)
    assert [(h.entry_id, h.score) for h in again] == [(h.entry_id, h.score) for h in hits]


def test_bm25_ranks_matches_by_score_then_the_rest_oldest_first(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "m.sqlite")
    memory = _memory(store)
    hits = _hits(store, memory, QUERY)
    matches, rest = hits[:3], hits[3:]
    assert all(h.score > 0 for h in matches)
    assert [h.summary for h in rest] == NOT_MATCHING  # storage order = oldest first
    assert all(h.score == 0.0 for h in rest)
    assert [h.summary for h in _hits(store, memory, QUERY, k=2)] == [h.summary for h in matches[:2]]


@pytest.mark.parametrize("query", ["", "?!", "zebra quantum"])
def test_a_query_matching_nothing_ranks_every_entry_oldest_first(
    tmp_path: Path, query: str
) -> None:
    path = tmp_path / "m.sqlite"
    memory = _memory(EmbeddedStore(path))
    for search, alpha in [("bm25", 0.6), ("hybrid", 0.0)]:
        hits = _hits(_store(path, search, alpha), memory, query)
        assert [h.summary for h in hits] == TEXTS, search
        assert {h.score for h in hits} == {0.0}


def test_hybrid_alpha_0_is_bm25_in_full(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    memory = _memory(EmbeddedStore(path))
    bm25 = [h.entry_id for h in _hits(EmbeddedStore(path), memory, QUERY)]
    # The weakest match's normalised score is 0, like the non-matches': it still ranks first.
    assert [h.entry_id for h in _hits(_store(path, "hybrid", 0.0), memory, QUERY)] == bm25


def test_context_snapshots_are_ranked_in_full_too(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "m.sqlite")
    memory = _memory(store)
    for text in ["User lives in Denver.", "User owns a road bike.", "User moved to Austin."]:
        store.put_context(memory, text)
    found = store.search(memory, "bike", top_ke=0, top_kc=3)
    assert [c.context for c in found.contexts] == [
        "User owns a road bike.",
        "User lives in Denver.",
        "User moved to Austin.",
    ]
    assert [c.score for c in found.contexts][1:] == [0.0, 0.0]
    assert len(store.search(memory, "zebra", top_ke=0, top_kc=2).contexts) == 2
