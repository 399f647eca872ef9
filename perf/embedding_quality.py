"""What the static embedding costs in retrieval quality, on real conversations (LoCoMo).

    LOCOMO_DATA=path/to/locomo10.json python perf/embedding_quality.py [--modes ...]

LoCoMo (CC BY-NC 4.0, never bundled; `lme-bench dataset download locomo` or the repository's
`data/locomo10.zip`) has questions whose evidence is a list of turns. Each conversation's turns
become one embedded-store memory (one entry per turn, "speaker: text"); each question with
evidence (categories 1-4) searches it, and the turn-level recall of its evidence is counted at
5 and 10: any evidence turn in the top k, and all of them. Per search mode and embedding model,
with the seconds spent embedding and searching. Semantic questions where the words differ from
the evidence's are where a weaker embedding shows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import support  # noqa: F401  # this clone's lme_bench on the import path

from lme_bench.builtin_benchmarks.locomo.reader import load_samples
from lme_bench.embeddings import MINILM, load_embedder
from lme_bench.embeddings.static import STATIC_MINILM
from lme_bench.entries.models import NewEntry
from lme_bench.reference_memory.store import EmbeddedStore

MODES = {
    "bm25": ("bm25", None),
    "hybrid-minilm": ("hybrid", MINILM),
    "hybrid-static": ("hybrid", STATIC_MINILM),
    "dense-minilm": ("dense", MINILM),
    "dense-static": ("dense", STATIC_MINILM),
}


def measure(data: Path, mode: str, model: str | None) -> dict[str, float]:
    found: dict[str, list[float]] = {"any@5": [], "all@5": [], "any@10": [], "all@10": []}
    seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        embedder = load_embedder(model) if model else None
        store = EmbeddedStore(Path(tmp) / "m.sqlite", search=mode, embedder=embedder)
        for sample in load_samples(data):
            conversation = sample.conversation
            vault = store.get_or_create_vault("quality")
            memory_id = store.get_or_create_memory(vault, conversation.conversation_id)
            store.add_entries(
                memory_id,
                [
                    NewEntry(
                        raw_entry=t.text, summary=f"{t.speaker}: {t.text}", tags={"d": t.dia_id}
                    )
                    for t in conversation.turns()
                ],
            )
            for question, gold in zip(sample.questions, sample.gold, strict=True):
                evidence = set(gold.evidence)
                if gold.category == 5 or not evidence:
                    continue
                started = time.perf_counter()
                hits = store.search(memory_id, question.text, top_ke=10, top_kc=0).entries
                seconds += time.perf_counter() - started
                ranked = [hit.tags.get("d") for hit in hits]
                for k in (5, 10):
                    top = set(ranked[:k])
                    found[f"any@{k}"].append(float(bool(top & evidence)))
                    found[f"all@{k}"].append(float(evidence <= top))
        store.close()
    figures = {name: statistics.fmean(values) for name, values in found.items()}
    figures["questions"] = len(found["any@5"])
    figures["seconds"] = seconds
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=os.environ.get("LOCOMO_DATA"))
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated, of: " + ", ".join(MODES)
    )
    args = parser.parse_args()
    if args.data is None:
        parser.error("give --data or LOCOMO_DATA: a LoCoMo file, zip or folder")
    print("| search | questions | any@5 | all@5 | any@10 | all@10 | seconds (embedding + search) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.modes.split(","):
        mode, model = MODES[name.strip()]
        f = measure(args.data, mode, model)
        print(
            f"| {name} | {f['questions']:.0f} | {f['any@5']:.3f} | {f['all@5']:.3f} |"
            f" {f['any@10']:.3f} | {f['all@10']:.3f} | {f['seconds']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
