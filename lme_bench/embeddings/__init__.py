"""Text embedders for dense and hybrid search (see `models`), shared by every backend and store."""

from lme_bench.embeddings.models import (
    HASHING,
    INSTALL_HINT,
    MINILM,
    Embedder,
    HashingEmbedder,
    MissingExtraError,
    SentenceTransformerEmbedder,
    Vectors,
    load_embedder,
    pack,
    unpack,
)

__all__ = [
    "HASHING",
    "INSTALL_HINT",
    "MINILM",
    "Embedder",
    "HashingEmbedder",
    "MissingExtraError",
    "SentenceTransformerEmbedder",
    "Vectors",
    "load_embedder",
    "pack",
    "unpack",
]
