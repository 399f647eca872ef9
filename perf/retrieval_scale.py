"""Time raw ingestion + retrieval evaluation on generated S- or M-scale data.

    python perf/retrieval_scale.py --scale s --questions 50 [--workers 2] [--flow]

Generates the data once (perf/data/), then runs the benchmark's steps (lme_bench.run.steps)
in a thread pool, or the whole Prefect flow with --flow, into a fresh results folder, and prints
one Markdown row of figures: phase times (and the evaluation's CPU time), questions/s, turns/s,
peak RSS and store size.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from support import ROOT

from lme_bench.backends.builtin_params import memory_path
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.generate import generate_dataset
from lme_bench.run.finish import RunResults, write_run
from lme_bench.run.steps import (
    RunPlan,
    evaluate_question,
    ingest_question,
    plan_run,
    prepare_questions,
)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _steps(settings: Settings, plan: RunPlan, workers: int) -> dict[str, float]:
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    prepared, refs = prepare_questions(plan)
    t1 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        outcomes = list(
            pool.map(lambda r: asyncio.run(ingest_question(r, settings, plan.run_id)), refs)
        )
        t2 = time.perf_counter()
        cpu2 = time.process_time()
        pairs = zip(refs, outcomes, strict=True)
        rows = [
            row
            for rows in pool.map(lambda p: asyncio.run(evaluate_question(*p, settings)), pairs)
            for row in rows
        ]
    t3 = time.perf_counter()
    cpu3 = time.process_time()
    report = write_run(plan, settings, prepared, refs, RunResults(outcomes, rows), started_at)
    t4 = time.perf_counter()
    overall = report.summary["session"]["overall"]
    return {
        "questions": len(refs),
        "turns": sum(r.n_turns for r in refs),
        "prepare_s": t1 - t0,
        "ingest_s": t2 - t1,
        "evaluate_s": t3 - t2,
        "evaluate_cpu_s": cpu3 - cpu2,  # CPU seconds of all threads: steadier on a busy machine
        "write_s": t4 - t3,
        "total_s": t4 - t0,
        "session_recall_any@5": overall.get("recall_any@5", float("nan")),
    }


def _flow(plan: RunPlan, config: Path, data: Path, results: Path) -> dict[str, float]:
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
    from lme_bench_flows.benchmark import benchmark

    from lme_bench.run.request import RunRequest

    t0 = time.perf_counter()
    result = benchmark(
        RunRequest(config=str(config), dataset=str(data), results_dir=str(results), run_id="bench")
    )
    overall = result["summary"]["session"]["overall"]
    return {
        "questions": result["summary"]["session"]["questions"],
        "total_s": time.perf_counter() - t0,
        "session_recall_any@5": overall.get("recall_any@5", float("nan")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("s", "m"), default="s")
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--flow", action="store_true", help="run the Prefect flow instead")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    args = parser.parse_args()

    data = args.data_dir / f"lme_{args.scale}_{args.questions}_seed{args.seed}.json"
    if not data.exists():
        stats = generate_dataset(data, n_questions=args.questions, scale=args.scale, seed=args.seed)
        print(f"generated {data} ({stats.bytes / 1e6:.0f} MB) in {stats.seconds:.1f} s")
    with tempfile.TemporaryDirectory(prefix="lme-bench-") as tmp:
        results = Path(tmp)
        overrides = {"dataset.path": str(data), "run.results_dir": str(results), "run.id": "bench"}
        settings = load_settings(None, **overrides)
        plan = plan_run(settings)
        if args.flow:
            figures = _flow(plan, ROOT / "configs" / "default.toml", data, results)
        else:
            figures = _steps(settings, plan, args.workers)
        store = memory_path(settings)
        figures["store_mb"] = store.stat().st_size / 1e6 if store.exists() else 0.0
    figures["questions_per_s"] = figures["questions"] / figures["total_s"]
    figures["peak_rss_mb"] = _peak_rss_mb()
    mode = "flow" if args.flow else f"steps, {args.workers} workers"
    print(
        f"| {args.scale.upper()} x {args.questions} | {mode} | "
        + " | ".join(
            f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()
        )
        + " |"
    )


if __name__ == "__main__":
    main()
