"""A plug-in backend that embeds, on an install without the `dense` extra: the error names the
backend, the embedder it asked for and how to install the extra that provides it (torch
first, from PyPI), with no advice meant for the built-in store."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from lme_bench.backends.configured import open_system
from lme_bench.backends.registry import backend_class
from lme_bench.config.settings import load_settings
from lme_bench.conformance import build_system
from lme_bench.embeddings import MissingExtraError

ROOT = Path(__file__).resolve().parents[2]
EMBEDS = """

class EmbeddingNotes(SessionNotes):
    def __init__(self, params: SessionNotesParams, env: BackendEnv) -> None:
        super().__init__(params, env)
        self.embedder = env.embedder()
"""


def _check(message: str, backend: str) -> None:
    assert f"[memory] backend = {backend!r} asked for the embedder" in message
    assert "[memory] embedding_model = 'all-MiniLM-L6-v2'" in message
    assert "sentence_transformers" in message  # what is not importable
    assert (
        "`pip install -c constraints.txt torch==2.13.0`, then"
        " `pip install -c constraints.txt 'lme-bench[dense]'`"
    ) in message
    assert "download.pytorch.org" not in message  # not reachable from a PyPI-only machine
    assert "[memory.params] search" not in message  # the built-in store's key, not a plug-in's


def test_a_plug_in_that_embeds_is_told_which_extra_its_embedder_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plug_in = tmp_path / "chroma_backend.py"
    shutil.copy(ROOT / "docs" / "example_backend.py", plug_in)
    plug_in.write_text(plug_in.read_text() + EMBEDS)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    backend = f"{plug_in}:EmbeddingNotes"
    settings = load_settings(None, **{"run.results_dir": str(tmp_path), "memory.backend": backend})
    with pytest.raises(MissingExtraError) as in_a_run:
        open_system(settings)  # how each stage of a run builds it
    _check(str(in_a_run.value), backend)
    with pytest.raises(MissingExtraError) as in_conformance:
        build_system(backend_class(backend), {}, tmp_path / "data", settings=settings)
    _check(str(in_conformance.value), backend)
