"""The scale-out deployment at 200 ms a model call on 1, 2 and 4 process workers, against the
ideal: model calls x latency / calls in flight.

    python perf/workers_speed.py --questions 64 --workers 1,2,4 [--latency 0.2] [--concurrency 8]

For each worker count N: a Prefect server on loopback, a process work pool with N workers and
the project's deployments; `benchmark/scale-out` splits the run into N shards (child flow runs
of `benchmark/shard`), each on whichever worker takes it, then collects the whole run from the
shards' cached work. The scripted fake models are slowed to --latency seconds a call
([providers.slow], kind "fake"): context-only ingestion, answers and judging. Each shard is its
own process with its own in-process limit of --concurrency calls, so N shards keep N x
--concurrency calls in flight at most: the ideal is calls x latency / (N x concurrency). Prints
one row per N: the parent flow run's wall time, the shards' span, the calls, the ideal, ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from prefect_flow import CONFIG
from support import BIN, ROOT, free_port, prefect_cli, spawn, stop_group, wait_prefect

from lme_bench.dataset.generate import generate_dataset

POOL = "lme-bench"


def _flow_runs(env: dict[str, str], run_id: str) -> list[dict[str, object]]:
    """The flow runs of `run_id` (parent and shards): name, start, end, state."""
    code = (
        "import json,sys\nfrom prefect.client.orchestration import get_client\n"
        "with get_client(sync_client=True) as c:\n"
        "    rs=[r for r in c.read_flow_runs(limit=200) if sys.argv[1] in r.name]\n"
        "    print(json.dumps([{'name':r.name,'state':r.state_name,"
        "'start':r.start_time.timestamp(),'end':r.end_time.timestamp()} for r in rs]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, run_id], env=env, capture_output=True, text=True, check=True
    ).stdout
    runs: list[dict[str, object]] = json.loads(out)
    return runs


def _calls(run_dir: Path) -> int:
    import pyarrow.parquet as pq

    tables = ("ingest", "hypotheses", "scores")
    return sum(sum(pq.read_table(run_dir / f"{t}.parquet").column("llm_calls").to_pylist())
               for t in tables)  # fmt: skip


def _measure(workers: int, args: argparse.Namespace, data: Path, tmp: Path) -> dict[str, float]:
    port, home = free_port(), tmp / f"prefect-{workers}"
    logs = home / "logs"
    logs.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "LME_"))} | {
        "PREFECT_HOME": str(home), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_WORKER_QUERY_SECONDS": "2",
        "LME_BENCH_ROOT": str(ROOT), "PYTHONUNBUFFERED": "1",
    }  # fmt: skip
    config = tmp / f"workers-{workers}.toml"
    text = CONFIG.format(
        latency=args.latency, ingest=args.concurrency, concurrency=args.concurrency
    )
    text = text.replace("[cache]\n", f'[cache]\nstorage = "{tmp / "cache"}"\n')
    config.write_text(text)
    server = spawn([str(BIN / "prefect"), "server", "start", "--port", str(port)], env,
                    logs / "server.log")  # fmt: skip
    started: list[subprocess.Popen[bytes]] = []
    try:
        wait_prefect(f"http://127.0.0.1:{port}/api")
        prefect_cli(env, "work-pool", "create", POOL, "--type", "process", "--overwrite")
        for number in range(workers):
            worker = ["worker", "start", "--pool", POOL, "--name", f"bench-{number}"]
            started.append(spawn([str(BIN / "prefect"), *worker], env, logs / f"w{number}.log"))
        prefect_cli(
            env, "--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"
        )
        run_id = f"workers-{workers}"
        request = {
            "config": str(config), "dataset": str(data), "results_dir": str(tmp / "results"),
            "run_id": run_id, "shards": workers, "shard_deployment": "benchmark/shard",
        }  # fmt: skip
        params = json.dumps({"request": request})
        prefect_cli(env, "deployment", "run", "benchmark/scale-out", "--watch", "--params", params)
        runs = _flow_runs(env, run_id)
    finally:
        for process in (*started, server):
            stop_group(process)
    (parent,) = [r for r in runs if "shard" not in str(r["name"])]
    shards = [r for r in runs if "shard" in str(r["name"])] or [parent]  # 1: no child runs
    assert all(r["state"] == "Completed" for r in runs), runs
    calls = _calls(tmp / "results" / run_id)
    shard_span = max(float(r["end"]) for r in shards) - min(float(r["start"]) for r in shards)  # type: ignore[arg-type]
    ideal = calls * args.latency / (workers * args.concurrency)
    wall = float(parent["end"]) - float(parent["start"])  # type: ignore[arg-type]
    return {"workers": workers, "calls": calls, "wall_s": wall, "shards_s": shard_span,
            "ideal_s": ideal}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=64)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    args = parser.parse_args()
    data = args.data_dir / f"lme_s_{args.questions}_seed0.json"
    if not data.exists():
        generate_dataset(data, n_questions=args.questions, scale="s", seed=0)
    print("| workers | calls | parent flow run s | shards' span s | ideal s | shards / ideal |")
    print("|---|---|---|---|---|---|")
    for workers in (int(n) for n in args.workers.split(",")):
        with tempfile.TemporaryDirectory(prefix="lme-bench-workers-") as tmp:
            row = _measure(workers, args, data, Path(tmp))
        print(
            f"| {workers} | {row['calls']:,.0f} | {row['wall_s']:.1f} | {row['shards_s']:.1f} |"
            f" {row['ideal_s']:.1f} | {row['shards_s'] / row['ideal_s']:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
