"""Text embedders for dense and hybrid search, shared by every backend and store.

`models`: the embedders themselves; `shared`: one model per process with a bounded vector cache,
handed to each caller as a view that counts its own calls (`load_embedder`).
"""

from lme_bench.embeddings.models import (
    HASHING,
    INSTALL_HINT,
    MINILM,
    Embedder,
    HashingEmbedder,
    MissingExtraError,
    SentenceTransformerEmbedder,
    Vectors,
    make_embedder,
    pack,
    unpack,
)
from lme_bench.embeddings.shared import (
    CountingEmbedder,
    EmbeddingCounts,
    SharedModel,
    embedding_counts,
    forget_vectors,
    load_embedder,
    process_totals,
)

__all__ = [
    "HASHING",
    "INSTALL_HINT",
    "MINILM",
    "CountingEmbedder",
    "Embedder",
    "EmbeddingCounts",
    "HashingEmbedder",
    "MissingExtraError",
    "SentenceTransformerEmbedder",
    "SharedModel",
    "Vectors",
    "embedding_counts",
    "forget_vectors",
    "load_embedder",
    "make_embedder",
    "pack",
    "process_totals",
    "unpack",
]
