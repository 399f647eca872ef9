"""The run's embedder handed to mem0 as a LangChain `Embeddings`, through mem0's `langchain`
embedder provider: every mem0 memory of a process shares the one model (and its cache of
vectors) that the other stages use, instead of loading its own copy per memory."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from lme_bench.backends.protocol import Usage


def _as_lists(vectors: Any) -> list[list[float]]:
    if hasattr(vectors, "tolist"):  # numpy
        return [list(map(float, row)) for row in vectors.tolist()]
    return [list(map(float, row)) for row in vectors]


class SharedEmbeddings(Embeddings):
    """Embeds with `embedder` (lme_bench.embeddings.Embedder) and counts mem0's requests in
    `usage`: one embedding call per request, one text per text asked (mem0 reports none)."""

    def __init__(self, embedder: Any, usage: Usage, lock: threading.Lock) -> None:
        self.embedder = embedder
        self.usage = usage
        self.lock = lock

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self.lock:
            self.usage.embedding_calls += 1
            self.usage.embedded_texts += len(texts)
        return _as_lists(self.embedder.embed(list(texts)))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts) if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text])[0]
