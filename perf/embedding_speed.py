"""Local embedding speed: sentences/s of the packaged MiniLM on this machine's CPU, by batch size.

    python perf/embedding_speed.py [--texts 512] [--rounds 3] [--batch-sizes 1,16,64,256]

Embeds turns of a generated S-scale question (the texts dense and hybrid search embed: one per
turn, ≈ 380 characters, ≈ 85 word pieces) through `SentenceTransformer.encode`, as the store
does. Batch sizes are interleaved round by round so a busy machine slows them alike; each row
gives the median wall rate and the rate per CPU-second of this process (what the work costs
whatever else runs). Also: the packaged model truncated at 128 word pieces (the length it was
trained at), with int8 dynamic quantization of its linear layers, and with its matrix products
in bfloat16, each with its least and mean cosine to the full model's vectors: what a faster
model would cost in fidelity; and the static embedding distilled from it (another vector space:
its cost is measured in retrieval quality, perf/embedding_quality.py).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import support  # noqa: F401  # this clone's lme_bench on the import path

from lme_bench.dataset.generate import generate_dataset
from lme_bench.embeddings import MINILM, SentenceTransformerEmbedder, make_embedder
from lme_bench.embeddings.static import STATIC_MINILM, StaticEmbedder


def turn_texts(count: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "s.json"
        generate_dataset(data, n_questions=3, scale="s", seed=0)
        questions = json.loads(data.read_text())
    texts = [t["content"] for q in questions for s in q["haystack_sessions"] for t in s]
    return texts[:count]


def timed(model: Any, texts: list[str], batch: int) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = model.encode(
        texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True
    )
    return time.perf_counter() - wall, time.process_time() - cpu, vectors


class Bf16:
    """The same model, its matrix products in bfloat16 (fast where the CPU has bf16 units)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def encode(self, texts: list[str], **kwargs: Any) -> Any:
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.model.encode(texts, **kwargs)


class Static:
    """The static embedding distilled from MiniLM (its own dimension: no cosine to MiniLM)."""

    def __init__(self, embedder: StaticEmbedder) -> None:
        self.embedder = embedder
        embedder.embed(["distilled or read from the cache before timing"])

    def encode(self, texts: list[str], **kwargs: Any) -> Any:
        return self.embedder.embed(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-sizes", default="1,16,64,256")
    parser.add_argument("--no-variants", action="store_true", help="the packaged model only")
    args = parser.parse_args()
    batches = [int(b) for b in args.batch_sizes.split(",")]

    import torch

    embedder = make_embedder(MINILM)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    started = time.perf_counter()
    model = embedder.model
    model.encode(["warm up"])
    load_s = time.perf_counter() - started
    texts = turn_texts(args.texts)
    pieces = [len(ids) for ids in model.tokenizer(texts)["input_ids"]]
    print(
        f"{len(texts)} texts, mean {statistics.mean(len(t) for t in texts):.0f} characters,"
        f" mean {statistics.mean(pieces):.0f} word pieces ({sum(p > 128 for p in pieces)} over"
        f" 128); torch {torch.__version__}, {torch.get_num_threads()} threads,"
        f" {os.cpu_count()} CPUs; model load {load_s:.1f} s"
    )

    variants: dict[str, Any] = {"MiniLM": model}
    if not args.no_variants:
        short = copy.deepcopy(model)
        short.max_seq_length = 128
        variants["MiniLM, 128 word pieces"] = short
        quantized = torch.ao.quantization.quantize_dynamic(
            copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8
        )
        variants["MiniLM, int8 linear layers"] = quantized
        if torch.backends.mkldnn.is_available():
            variants["MiniLM, bf16 autocast"] = Bf16(model)
        variants[STATIC_MINILM] = Static(StaticEmbedder(embedder.path))

    # Every batch size for the packaged model; the variants at batch 64.
    runs = [("MiniLM", b) for b in batches] + [(name, 64) for name in variants if name != "MiniLM"]
    rates: dict[tuple[str, int], list[tuple[float, float]]] = {run: [] for run in runs}
    reference = None
    vectors_of: dict[str, Any] = {}
    for _ in range(args.rounds):
        for name, batch in runs:
            wall, cpu, vectors = timed(variants[name], texts, batch)
            rates[(name, batch)].append((len(texts) / wall, len(texts) / cpu))
            vectors_of[name] = vectors
            if name == "MiniLM":
                reference = vectors

    print(
        "| model | batch | sentences/s (wall, median) | sentences per CPU-second"
        " | cosine to MiniLM: least / mean |"
    )
    print("|---|---|---|---|---|")
    for name, batch in runs:
        wall = statistics.median(r[0] for r in rates[(name, batch)])
        per_cpu = statistics.median(r[1] for r in rates[(name, batch)])
        fidelity = "—"
        if name not in ("MiniLM", STATIC_MINILM) and reference is not None:
            cosines = (vectors_of[name] * reference).sum(axis=1)
            fidelity = f"{cosines.min():.3f} / {cosines.mean():.4f}"
        print(f"| {name} | {batch} | {wall:.1f} | {per_cpu:.1f} | {fidelity} |")


if __name__ == "__main__":
    main()
