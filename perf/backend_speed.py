"""Speed of every built-in memory system runnable here without keys, through lme-bench's stages.

    python perf/backend_speed.py [--questions 1] [--searches 40] [--backends a,b,...]
    python perf/backend_speed.py --sample [--questions 34]   # the bundled sample instead
    python perf/backend_speed.py --sample --memory-model openai:gpt-4o-mini   # real model

Each backend ingests generated S-scale questions (≈ 48 sessions, ≈ 490 turns each; data made
once in perf/data/) raw, through the ingest and retrieval stages' own code
(`lme_bench.run.steps`), into a fresh folder; then its memory is searched `--searches` more times
(the question, then user turns as queries) to time search. mem0, LangGraph/LangMem and Graphiti
run their real libraries with lme-bench's fake extraction models (the tests' setup: no key);
`mcp-stdio` and `mcp-http` reach our own memory server (`lme-bench memory serve`).

Columns: seconds per ingested session (the ingest stage's wall time over sessions), search p50
and p99 (ms), the system's own model and embedding calls per session (its `usage()` after the
ingest stage), texts embedded during the retrieval stage (this process's shared embedders: the
embedded store embeds its rows at the first dense search, then each query), session
recall_any@5 of the non-abstention questions with its provenance (exact: the system's own
session keys; attributed: matched by text), the ingest stage's time per call that reached the
memory and the retrieval stage's time per question. The `noop` row is a backend that does
nothing at once: its stage times are lme-bench's own overhead around the memory's calls.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from support import ROOT, free_port, start_memory_server

from lme_bench.backends.configured import open_system
from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Usage,
)
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.generate import generate_dataset
from lme_bench.dataset.loader import iter_questions
from lme_bench.embeddings import EmbeddingCounts, forget_vectors, process_totals
from lme_bench.ingest.question import IngestOutcome
from lme_bench.retrieval.official_ids import RetrievalRow
from lme_bench.run.steps import evaluate_question, ingest_question, plan_run, prepare_questions

QUESTION_DATE = "2023/08/01 (Tue) 09:00"


class NoOpMemory:
    """Keeps nothing, finds nothing, at once: what remains is lme-bench's own time."""

    Params: ClassVar[type[BackendParams]] = BackendParams
    name: ClassVar[str] = "noop"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.PROVENANCE})

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        self.calls = 0

    async def open_memory(self, title: str) -> str:
        return title

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        self.calls += 1

    async def wait_until_ready(self, memory_id: str) -> None:
        return None

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        return []

    async def delete_memory(self, memory_id: str) -> None:
        return None

    def usage(self) -> Usage:
        return Usage()

    async def close(self) -> None:
        return None


def stdio_server(folder: Path) -> dict[str, Any]:
    serve = ["memory", "serve", "--transport", "stdio", "--path", str(folder / "server.sqlite")]
    return {
        "memory.backend": "mcp",
        "memory.params": {
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "lme_bench_flows.command", *serve],
        },
    }


def http_server(url: str) -> dict[str, Any]:
    return {"memory.backend": "mcp", "memory.params": {"transport": "streamable_http", "url": url}}


BACKENDS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "noop": lambda _: {"memory.backend": f"{Path(__file__).resolve()}:NoOpMemory"},
    "embedded-bm25": lambda _: {"memory.backend": "embedded", "memory.params": {"search": "bm25"}},
    "embedded-dense": lambda _: {
        "memory.backend": "embedded",
        "memory.params": {"search": "dense"},
    },
    "embedded-hybrid": lambda _: {
        "memory.backend": "embedded",
        "memory.params": {"search": "hybrid"},
    },
    "mcp-stdio": stdio_server,
    "mcp-http": lambda _: {},  # the server is started per run (see `serving`)
    "mem0": lambda _: {"memory.backend": "mem0", "models.memory": "fake:mem0-extractor"},
    "langgraph": lambda _: {
        "memory.backend": "langgraph",
        "memory.params": {"store": "sqlite", "extract": "langmem"},
        "models.memory": "fake:langmem-extractor",
    },
    "graphiti": lambda _: {
        "memory.backend": "graphiti",
        "models.memory": "fake:graphiti-extractor",
    },
}


@contextmanager
def serving(name: str, folder: Path) -> Iterator[dict[str, Any]]:
    """The backend's overrides, with our HTTP memory server running for mcp-http."""
    if name != "mcp-http":
        yield BACKENDS[name](folder)
        return
    port = free_port()
    server = start_memory_server(folder / "server.sqlite", port)
    try:
        yield http_server(f"http://127.0.0.1:{port}/mcp")
    finally:
        server.terminate()
        server.wait(timeout=30)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def queries(data: Path, question_id: str, count: int) -> list[str]:
    for item in iter_questions(data):
        instance = item.instance
        if instance.question_id == question_id:
            turns = [t.content for s in instance.haystack_sessions for t in s if t.role == "user"]
            return [instance.question, *turns][:count]
    raise KeyError(question_id)


async def timed_searches(settings: Settings, memory_id: str, texts: list[str]) -> list[float]:
    system = open_system(settings)
    try:
        seconds = []
        for text in texts:
            started = time.perf_counter()
            await system.search(memory_id, text, question_date=QUESTION_DATE, k=50)
            seconds.append(time.perf_counter() - started)
        return seconds
    finally:
        await system.close()


def embedded_so_far() -> EmbeddingCounts:
    return sum(process_totals().values(), EmbeddingCounts())


def minus(after: EmbeddingCounts, before: EmbeddingCounts) -> EmbeddingCounts:
    return EmbeddingCounts(
        after.calls - before.calls, after.texts - before.texts, after.cache_hits - before.cache_hits
    )


def recall(rows: list[RetrievalRow]) -> float:
    """Mean recall_any@5 over the scored rows (abstentions and rows not applicable have none)."""
    scored = [r.metrics["recall_any@5"] for r in rows if "recall_any@5" in r.metrics]
    return statistics.mean(scored) if scored else float("nan")


def provenance(rows: list[RetrievalRow]) -> str:
    """How hits mapped to the haystack (exact, attributed), and how many rows were not
    applicable."""
    kinds = sorted({r.provenance for r in rows if r.status == "ok"})
    skipped = sum(r.status == "not-applicable" for r in rows)
    return "+".join(kinds) + (f" ({skipped} n/a)" if skipped else "") or "—"


def measure(
    name: str, data: Path, questions: int, searches: int, memory_model: str | None = None
) -> dict[str, Any]:
    forget_vectors()  # each backend embeds from a cold process cache
    with (
        tempfile.TemporaryDirectory(prefix=f"lme-speed-{name}-") as tmp,
        serving(name, Path(tmp)) as overrides,
    ):
        base = {"dataset.path": str(data), "run.results_dir": tmp, "run.id": name}
        if memory_model and "models.memory" in overrides:
            overrides = overrides | {"models.memory": memory_model}
        settings = load_settings(None, **(base | overrides))
        plan = plan_run(settings)
        _, refs = prepare_questions(plan, limit=questions)
        outcomes: list[IngestOutcome] = []
        rows: list[RetrievalRow] = []
        ingest_s = evaluate_s = ingest_cpu_s = 0.0
        # the retrieval stage reads no usage: its embeddings (the embedded store's lazy ones,
        # queries) are what this process's shared models embedded meanwhile
        searching = EmbeddingCounts()
        for ref in refs:
            started, cpu = time.perf_counter(), time.process_time()
            outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
            ingested, ingest_cpu_s = time.perf_counter(), ingest_cpu_s + time.process_time() - cpu
            before = embedded_so_far()
            rows += asyncio.run(evaluate_question(ref, outcome, settings))
            searching = searching + minus(embedded_so_far(), before)
            ingest_s += ingested - started
            evaluate_s += time.perf_counter() - ingested
            outcomes.append(outcome)
        search_s: list[float] = []
        if name != "noop" and searches:
            texts = queries(data, refs[0].question_id, searches)
            search_s = asyncio.run(timed_searches(settings, outcomes[0].memory_id, texts))
    sessions = sum(len(o.sessions) for o in outcomes)
    memory_calls = sum(sum(r.memory_calls.values()) for o in outcomes for r in o.sessions)
    usage = Usage()
    for outcome in outcomes:
        usage.add(outcome.system_usage)
    by_level = {level: [r for r in rows if r.granularity == level] for level in ("session", "turn")}
    return {
        "backend": name,
        "questions": len(refs),
        "sessions": sessions,
        "s_per_session": sum(o.seconds for o in outcomes) / max(sessions, 1),
        "search_p50_ms": 1000 * statistics.median(search_s) if search_s else float("nan"),
        "search_p99_ms": 1000 * pct(search_s, 0.99) if search_s else float("nan"),
        "model_calls_per_session": usage.model_calls / max(sessions, 1),
        "embedding_calls_per_session": usage.embedding_calls / max(sessions, 1),
        "embedded_texts_per_session": usage.embedded_texts / max(sessions, 1),
        "retrieval_embedded_texts_per_question": searching.texts / max(len(refs), 1),
        **{f"{level}_recall_any@5": recall(r) for level, r in by_level.items()},
        **{f"{level}_provenance": provenance(r) for level, r in by_level.items()},
        # the ingest stage's time per call that reached the memory, the retrieval stage's per
        # question (one search each, its metrics computed): lme-bench's own for `noop`
        "ingest_ms_per_memory_call": 1000 * ingest_s / max(memory_calls, 1),
        # CPU time of this process (a busy machine inflates wall time, not this); servers and
        # a stdio server's process are not included
        "ingest_cpu_ms_per_memory_call": 1000 * ingest_cpu_s / max(memory_calls, 1),
        "retrieval_ms_per_question": 1000 * evaluate_s / max(len(refs), 1),
        "memory_calls_per_session": memory_calls / max(sessions, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1)
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--sample", action="store_true", help="the bundled sample's questions")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    parser.add_argument(
        "--memory-model",
        help="a real model for mem0, LangMem and Graphiti instead of their fakes,"
        " e.g. openai:gpt-4o-mini (its key from the environment)",
    )
    args = parser.parse_args()
    names = args.backends.split(",")
    unknown = [name for name in names if name not in BACKENDS]
    if unknown:
        raise SystemExit(f"--backends: unknown {', '.join(unknown)}; known: {', '.join(BACKENDS)}")

    if args.sample:
        data = ROOT / "lme_bench" / "dataset" / "sample" / "longmemeval_sample.json"
    else:
        data = args.data_dir / f"lme_s_{max(args.questions, 2)}_seed0.json"
        if not data.exists():
            data.parent.mkdir(parents=True, exist_ok=True)
            generate_dataset(data, n_questions=max(args.questions, 2), scale="s", seed=0)
    columns = None
    for name in names:
        figures = measure(name, data, args.questions, args.searches, args.memory_model)
        if columns is None:
            columns = list(figures)
            print("| " + " | ".join(columns) + " |")
            print("|" + "---|" * len(columns))
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in figures.values()]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
