"""Retrieval quality of the embedded store's search modes (bm25, dense, hybrid by alpha).

    python perf/retrieval_search_modes.py [--dataset FILE] [--limit N]
        [--modes bm25,dense,hybrid:0.3,hybrid:0.6,hybrid:0.8] [--model all-MiniLM-L6-v2]
        [--timing]

Ingests every question once (raw ingestion; the same memories serve every mode), then searches
each memory with the question text in each mode and scores the ranking with the official
metrics, averaged over non-abstention questions. Prints one Markdown row per mode. With
--timing, also measures embedding throughput and the first-search cost of one S-scale memory.
Needs the dense extra (`make install-dense`) unless --model hashing-trigram-256.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import support  # noqa: F401  # this clone's lme_bench on the import path

from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.generate import generate_dataset
from lme_bench.dataset.views import make_view
from lme_bench.embeddings import load_embedder
from lme_bench.ingest.as_they_are import session_entries
from lme_bench.reference_memory.store import EmbeddedStore
from lme_bench.results.summary import summarize_retrieval
from lme_bench.run.steps import (
    evaluate_question,
    ingest_question,
    plan_run,
    prepare_questions,
)

METRICS = ("recall_any@5", "recall_all@5", "ndcg_any@5", "recall_any@10")


def _mode(spec: str) -> tuple[str, float]:
    search, _, alpha = spec.partition(":")
    return search, float(alpha or 0.6)


def _ingest(base: dict[str, Any], limit: int | None) -> tuple[list[Any], list[Any]]:
    """Ingest once (search mode plays no part in ingestion): the refs and their outcomes."""
    settings = load_settings(None, **base)
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=limit)
    return refs, [asyncio.run(ingest_question(ref, settings, plan.run_id)) for ref in refs]


def _evaluate(
    base: dict[str, Any], refs: list[Any], outcomes: list[Any], spec: str, model: str
) -> dict[str, Any]:
    search, alpha = _mode(spec)
    settings = load_settings(
        None,
        **base,
        **{
            "memory.params": {"search": search, "alpha": alpha},
            "memory.embedding_model": model,
        },
    )
    started = time.perf_counter()
    rows = [
        row
        for ref, outcome in zip(refs, outcomes, strict=True)
        for row in asyncio.run(evaluate_question(ref, outcome, settings))
    ]
    seconds = time.perf_counter() - started
    summary = summarize_retrieval(rows)
    return {
        "mode": search,
        "alpha": alpha if search == "hybrid" else None,
        "n": summary["session"]["overall"]["n"],
        "session": {m: summary["session"]["overall"][m] for m in METRICS},
        "turn": {m: summary["turn"]["overall"][m] for m in METRICS},
        "seconds": seconds,
    }


def _row(result: dict[str, Any]) -> str:
    alpha = "" if result["alpha"] is None else f"{result['alpha']:.1f}"
    cells = [result["mode"], alpha, str(result["n"])]
    cells += [f"{result['session'][m]:.3f}" for m in METRICS]
    cells += [f"{result['turn'][m]:.3f}" for m in METRICS]
    cells.append(f"{result['seconds']:.1f} s")
    return "| " + " | ".join(cells) + " |"


def _header() -> str:
    names = [f"session {m}" for m in METRICS] + [f"turn {m}" for m in METRICS]
    head = "| mode | alpha | n | " + " | ".join(names) + " | search time |"
    return head + "\n|" + "---|" * 3 + "---:|" * (len(names) + 1)


def _s_memory_texts(tmp: Path) -> list[tuple[str, list[Any]]]:
    """One generated S-scale question: its question text and its entries."""
    data = tmp / "s1.json"
    generate_dataset(data, n_questions=1, scale="s", seed=0)
    settings = load_settings(None, **{"dataset.path": str(data), "run.results_dir": str(tmp)})
    _, refs = prepare_questions(plan_run(settings))
    view, _ = make_view(refs[0].load())
    return [(view.question, [e for s in view.sessions for e in session_entries(s)])]


def _timing(model: str, tmp: Path) -> None:
    t0 = time.perf_counter()
    embedder = load_embedder(model)
    embedder.embed(["warm up"])
    print(f"- model load (import + first embed): {time.perf_counter() - t0:.2f} s", flush=True)
    ((question, entries),) = _s_memory_texts(tmp)
    texts = list(dict.fromkeys(e.summary for e in entries))
    runs = []
    for _ in range(2):
        t = time.perf_counter()
        embedder.embed(texts)
        runs.append(time.perf_counter() - t)
    mean_chars = statistics.mean(len(t) for t in texts)
    print(
        f"- embedding throughput: {len(texts) / min(runs):.0f} sentences/s"
        f" ({len(texts)} distinct summaries of one S memory, mean {mean_chars:.0f} chars,"
        f" best of 2: {min(runs):.2f} s)"
    )
    path = tmp / "s-memory.sqlite"
    store = EmbeddedStore(path)
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "s__timing")
    store.add_entries(memory, entries)
    for label, search in (("bm25", "bm25"), ("hybrid, cold cache", "hybrid")):
        timed = EmbeddedStore(path, search=search, embedder=embedder)
        t = time.perf_counter()
        timed.search(memory, question, top_ke=1000, top_kc=0)
        first = time.perf_counter() - t
        t = time.perf_counter()
        timed.search(memory, question + " again", top_ke=1000, top_kc=0)
        print(
            f"- S memory ({len(entries)} entries), {label}: first search {first:.3f} s,"
            f" next search {time.perf_counter() - t:.3f} s"
        )
    warm = EmbeddedStore(path, search="hybrid", embedder=embedder)
    t = time.perf_counter()
    warm.search(memory, question, top_ke=1000, top_kc=0)
    print(
        f"- S memory, hybrid, new store on the same file (vectors from the embeddings table):"
        f" first search {time.perf_counter() - t:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="LongMemEval JSON (default: the sample)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--modes", default="bm25,dense,hybrid:0.3,hybrid:0.6,hybrid:0.8")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="[memory] embedding_model")
    parser.add_argument("--timing", action="store_true", help="also time embedding throughput")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="lme-bench-modes-") as tmp:
        base: dict[str, Any] = {"run.results_dir": tmp, "run.id": "modes"}
        if args.dataset:
            base["dataset.path"] = str(args.dataset)
        settings: Settings = load_settings(None, **base)
        print(f"dataset: {plan_run(settings).dataset_path}; model: {args.model}\n")
        if args.timing:  # first, so the model load is timed too
            _timing(args.model, Path(tmp))
            print()
        refs, outcomes = _ingest(base, args.limit)
        print(_header())
        for spec in args.modes.split(","):
            print(_row(_evaluate(base, refs, outcomes, spec.strip(), args.model)), flush=True)


if __name__ == "__main__":
    main()
