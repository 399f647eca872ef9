"""The run's embedder for mem0: every mem0 memory of a process shares the one model (and its
cache of vectors) that the other stages use, instead of loading its own copy per memory.

mem0 is configured with its `langchain` embedder provider around this object (so building a
memory loads no model), then its `embedding_model` is this object itself, which also speaks
mem0's embedder interface (`embed`, and `embed_batch` in one call: mem0's LangChain adapter
would embed a batch text by text)."""

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

    # mem0's EmbeddingBase interface
    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self.embed_query(text)

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        return self.embed_documents(texts)
