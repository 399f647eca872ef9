"""One model per process, a bounded cache of its vectors, and counters per user.

`load_embedder` hands every caller (each store, each backend instance) its own
`CountingEmbedder`: a view of the process's one `SharedModel` for that model name. The shared
model keeps the vectors it made by sha256 of the text (least recently used dropped beyond
`capacity`), so a text embedded once in a process is not embedded again while it stays cached.
The view counts what its own calls cost: calls that reached the model, texts the model embedded,
texts served from the cache. A new view starts at zero, so a backend's counts are its own.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lme_bench.embeddings.models import Embedder, Vectors, make_embedder

DEFAULT_CAPACITY = 50_000  # MiniLM: 384 float32 = 1.5 KB a vector, ≈ 77 MB when full


@dataclass(frozen=True)
class EmbeddingCounts:
    """calls: embed calls that reached the model; texts: texts it embedded; cache_hits: texts
    answered from the process's cache instead."""

    calls: int = 0
    texts: int = 0
    cache_hits: int = 0

    def __add__(self, other: EmbeddingCounts) -> EmbeddingCounts:
        return EmbeddingCounts(
            self.calls + other.calls,
            self.texts + other.texts,
            self.cache_hits + other.cache_hits,
        )


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


class SharedModel:
    """An embedder and its vectors by sha256 of the text, bounded, safe across threads."""

    def __init__(self, inner: Embedder, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 0:
            raise ValueError(f"embedding cache capacity must be ≥ 0, got {capacity}")
        self.inner = inner
        self.capacity = capacity
        self._vectors: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.totals = EmbeddingCounts()

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(self, texts: Sequence[str]) -> tuple[list[Any], EmbeddingCounts]:
        """One vector per text, in order, and what this call cost."""
        keys = [text_key(t) for t in texts]
        found: dict[bytes, Any] = {}
        with self._lock:
            for key in keys:
                vector = self._vectors.get(key)
                if vector is not None:
                    self._vectors.move_to_end(key)
                    found[key] = vector
        misses = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if misses:
            # One call for every miss: the model batches them itself (sorted by length).
            made = _rows(self.inner.embed(list(misses.values())))
            fresh = dict(zip(misses, made, strict=True))
            found.update(fresh)
            self._remember(fresh)
        cost = EmbeddingCounts(
            calls=int(bool(misses)),
            texts=len(misses),
            cache_hits=len(keys) - len(misses),  # a repeat within the call counts as a hit
        )
        with self._lock:
            self.totals = self.totals + cost
        return [found[k] for k in keys], cost

    def forget(self) -> None:
        """Drop every cached vector (the counts stay)."""
        with self._lock:
            self._vectors.clear()

    def _remember(self, fresh: dict[bytes, Any]) -> None:
        if not self.capacity:
            return
        with self._lock:
            for key, vector in fresh.items():
                self._vectors[key] = vector
                self._vectors.move_to_end(key)
            while len(self._vectors) > self.capacity:
                self._vectors.popitem(last=False)


def _rows(vectors: Vectors) -> list[Any]:
    """Each vector on its own: numpy rows are copied, so a cached row holds no whole batch."""
    if hasattr(vectors, "ndim"):
        return [row.copy() for row in vectors]  # type: ignore[union-attr]
    return list(vectors)


def _stacked(rows: list[Any]) -> Vectors:
    if rows and hasattr(rows[0], "ndim"):
        import numpy

        return numpy.stack(rows)
    return rows


class CountingEmbedder:
    """A caller's view of a shared model: same vectors, its own counts (`counts`)."""

    def __init__(self, shared: SharedModel) -> None:
        self.shared = shared
        self._counts = EmbeddingCounts()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.shared.inner.name

    @property
    def dim(self) -> int:
        return self.shared.inner.dim

    @property
    def counts(self) -> EmbeddingCounts:
        return self._counts

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return []
        rows, cost = self.shared.embed(texts)
        with self._lock:
            self._counts = self._counts + cost
        return _stacked(rows)


def embedding_counts(embedder: object) -> EmbeddingCounts:
    """An embedder's counts; zero for None or an embedder that keeps none."""
    counts = getattr(embedder, "counts", None)
    return counts if isinstance(counts, EmbeddingCounts) else EmbeddingCounts()


_shared: dict[str, SharedModel] = {}
_shared_lock = threading.Lock()


def load_embedder(name: str, asked_by: str | None = None) -> CountingEmbedder:
    """The embedder a `[memory] embedding_model` names: a new counting view of the process's one
    model of that name (made at the first call; the weights load at the first embed).

    Raises MissingExtraError (a ConfigError) when the `dense` extra is not installed (worded
    for dense search, or for `asked_by`, e.g. the backend that asked), and ConfigError for a
    name that is neither a known model nor a model directory.
    """
    inner = make_embedder(name, asked_by)  # checks the name and the extra on every call: cheap
    with _shared_lock:
        shared = _shared.get(inner.name)
        if shared is None:
            shared = _shared[inner.name] = SharedModel(inner)
    return CountingEmbedder(shared)


def process_totals() -> dict[str, EmbeddingCounts]:
    """Every shared model's counts in this process, by model name."""
    with _shared_lock:
        return {name: shared.totals for name, shared in _shared.items()}


def forget_vectors() -> None:
    """Empty every shared model's vector cache in this process (benchmarks measuring each
    backend from a cold cache)."""
    with _shared_lock:
        models = list(_shared.values())
    for shared in models:
        shared.forget()
