"""`all-MiniLM-L6-v2-static`: a static embedding distilled here from the packaged MiniLM.

A fast, lower-quality stand-in for MiniLM when a run must embed hundreds of thousands of turns
on a few CPU cores. Distilled on first use, from the packaged weights only (nothing is
downloaded), and kept in the user cache:

1. every word piece of MiniLM's vocabulary (special and unused pieces aside) goes through the
   model alone, between `[CLS]` and `[SEP]`; its vector is the mean of the three outputs, as
   MiniLM pools a sentence;
2. the vectors are centred and projected on their first `DIM` principal components;
3. each piece is weighted by `a / (a + p)`, `p` its frequency under Zipf's law: the vocabulary
   lists whole-word pieces from the most frequent ("the" first), so frequent pieces count less.

A text's vector is the weighted mean of its pieces' vectors (no length limit), L2-normalised:
tokenising is nearly all the work, so thousands of turns a second on one core. Its vectors are
not MiniLM's: runs that use it name it as their embedding model, and perf/README.md
measures what it costs in retrieval quality.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lme_bench.common.file_lock import file_lock
from lme_bench.common.waits import waiting
from lme_bench.embeddings.loading import load_model

STATIC_MINILM = "all-MiniLM-L6-v2-static"
DIM = 256
RECIPE = "v1: [CLS] piece [SEP] mean, centred PCA, SIF a=1e-3 by Zipf rank"
_SIF_A = 1e-3
_FIRST_WORD_PIECE = 1996  # "the": from here the vocabulary runs from frequent to rare
_FIRST_ORDINARY_PIECE = 999  # before it: [PAD], [unusedN], [UNK], [CLS], [SEP], [MASK]
_tables: dict[str, Any] = {}
_tables_lock = threading.Lock()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lme-bench" / "static-embeddings"


def _source_digest(model_dir: Path) -> str:
    digest = hashlib.sha256(RECIPE.encode())
    for name in ("model.safetensors", "tokenizer.json"):
        digest.update((model_dir / name).read_bytes())
    return digest.hexdigest()[:16]


def _piece_weights(vocab_size: int) -> Any:
    import numpy

    ids = numpy.arange(vocab_size)
    # Pieces before "the" (single characters, punctuation) are treated as the most frequent.
    rank = numpy.maximum(ids - _FIRST_WORD_PIECE + 1, 1).astype(numpy.float64)
    harmonic = numpy.log(vocab_size) + 0.5772
    frequency = 1.0 / (rank * harmonic)
    return (_SIF_A / (_SIF_A + frequency)).astype(numpy.float32)


def distil(model_dir: Path, batch_size: int = 512) -> Any:
    """The (vocabulary by DIM) table of weighted piece vectors, computed from MiniLM."""
    import numpy
    import torch

    model = load_model(model_dir)
    transformer = model[0].auto_model
    tokenizer = model.tokenizer
    vocab_size = int(tokenizer.vocab_size)
    cls, sep = int(tokenizer.cls_token_id), int(tokenizer.sep_token_id)
    pieces = numpy.arange(_FIRST_ORDINARY_PIECE, vocab_size)
    vectors = numpy.zeros((vocab_size, transformer.config.hidden_size), dtype=numpy.float32)
    with torch.inference_mode():
        for start in range(0, len(pieces), batch_size):
            chunk = torch.from_numpy(pieces[start : start + batch_size])
            ids = torch.stack(
                [torch.full_like(chunk, cls), chunk, torch.full_like(chunk, sep)], dim=1
            )
            hidden = transformer(input_ids=ids, attention_mask=torch.ones_like(ids))[0]
            vectors[chunk.numpy()] = hidden.mean(dim=1).numpy()
    used = vectors[_FIRST_ORDINARY_PIECE:]
    centred = used - used.mean(axis=0)
    _, _, components = numpy.linalg.svd(centred, full_matrices=False)
    table = numpy.zeros((vocab_size, DIM), dtype=numpy.float32)
    table[_FIRST_ORDINARY_PIECE:] = centred @ components[:DIM].T
    return table * _piece_weights(vocab_size)[:, None]


def _table(model_dir: Path) -> Any:
    """The distilled table: from this process, else the user cache, else distilled now."""
    import numpy

    key = str(model_dir)
    found = _tables.get(key)
    if found is not None:
        return found
    with waiting(), _tables_lock:  # the first load (or distillation) is lme-bench's wait
        if key in _tables:
            return _tables[key]
        path = cache_dir() / f"{STATIC_MINILM}-{_source_digest(model_dir)}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        # One process distils; the others of a run wait for its file instead of repeating it.
        with file_lock(path.parent / f".{path.name}.lock"):
            if not path.is_file():
                table = distil(model_dir)
                partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
                with partial.open("wb") as out:
                    numpy.save(out, table)
                os.replace(partial, path)  # whole or absent
        _tables[key] = numpy.load(path)
        return _tables[key]


class StaticEmbedder:
    """Weighted mean of the distilled piece vectors of each text, L2-normalised."""

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = model_dir
        self._tokenizer: Any = None

    @property
    def name(self) -> str:
        return STATIC_MINILM

    @property
    def dim(self) -> int:
        return DIM

    def _pieces(self, texts: Sequence[str]) -> list[list[int]]:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [e.ids for e in encoded]

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy

        table = _table(self.model_dir)
        out = numpy.zeros((len(texts), DIM), dtype=numpy.float32)
        for row, ids in enumerate(self._pieces(texts)):
            if ids:
                out[row] = table[ids].sum(axis=0)
        norms = numpy.linalg.norm(out, axis=1, keepdims=True)
        return out / numpy.where(norms > 0, norms, 1.0)
