"""The S-scale retrieval-only run sharded over two process workers that share no disk, its
results and task cache in a bucket of a loopback S3 server, against the same run on local disk.

    python perf/sharded_s3_run.py --questions 500 [--rounds 1]

On generated S-scale data (perf/data/, made when missing: ≈ 48 sessions a question), the
default config (raw ingestion, embedded BM25 search, no model) each round:

1. locally: the benchmark flow in a process of its own, results and cache in a local folder;
2. the same process on S3: results and cache at s3://bench/round-N/single/;
3. sharded: the scale-out deployment on a Prefect server on loopback, its parent flow run on a
   worker of its own and its two shards on two more process workers (one work queue each),
   every worker with its own HOME, PREFECT_HOME, working folder and temp folder; results,
   cache and memory builds at s3://bench/round-N/ on SeaweedFS (made-up credentials). The
   dataset is read where every worker finds it, as a file built into a worker's image is.

Rounds alternate the order (local first, then sharded first). Then, for the last round: the
runs pulled from the bucket compared with the local one by scripts/compare_runs.py (timing and
identity aside), the sharded run again (it must run no stage and call no model), the bucket
listed and the workers' folders listed (no worker may keep a run folder). Prints a
table of figures; exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import (
    BIN,
    ROOT,
    free_port,
    prefect_cli,
    spawn,
    start_s3_server,
    stop_group,
    wait_prefect,
)

from lme_bench.dataset.generate import generate_dataset

POOL = "lme-bench"
BUCKET = "bench"  # start_s3_server's
QUEUES = ("shard-a", "shard-b")  # shard i goes to queue i mod 2, each polled by one worker
WORKERS = {"parent": "default", "worker-a": QUEUES[0], "worker-b": QUEUES[1]}
STAGES = ("ingest", "retrieval", "answer", "judge", "question-batch")
# Credentials any key passes on a server with no identities configured.
S3_KEYS = {"AWS_ACCESS_KEY_ID": "bench-access", "AWS_SECRET_ACCESS_KEY": "bench-secret"}
# What a worker may keep in its working folder: scratch a later run reuses or rebuilds.
SCRATCH = re.compile(
    r"(memory\.sqlite|checkpoints\.sqlite)(-wal|-shm|-journal)?|\.memory-title-key|\.cache|"
    r"\.locks?|.*\.lock|build-locks|backends"
)
LOCAL_RUNNER = (
    "import json, sys, time\n"
    "from lme_bench_flows.benchmark import benchmark\n"
    "from lme_bench.run.request import RunRequest\n"
    "started = time.perf_counter()\n"
    "benchmark(RunRequest(**json.loads(sys.argv[1])))\n"
    "open(sys.argv[2], 'w').write(json.dumps({'seconds': time.perf_counter() - started}))\n"
)


@dataclass
class Sharded:
    """One scale-out run: from its submission to its end as seen here, the parent flow run's
    and the shards' spans on the server, its flow runs, where the stages ran."""

    wall_s: float
    parent_s: float
    shards_s: float
    flow_runs: list[Any]
    stage_tasks: list[str]
    submitted: dict[str, str]


def _environment(tmp: Path, port: int, endpoint: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "LME_", "AWS_"))}
    return base | S3_KEYS | {
        "AWS_ENDPOINT_URL": endpoint, "AWS_DEFAULT_REGION": "us-east-1",
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api", "PREFECT_HOME": str(tmp / "server"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_WORKER_QUERY_SECONDS": "2",
        "LME_BENCH_ROOT": str(ROOT), "PYTHONUNBUFFERED": "1",
    }  # fmt: skip


def _own_folders(base: dict[str, str], folder: Path) -> dict[str, str]:
    """`base` with a home, Prefect home, working folder and temp folder of the process's own."""
    for name in ("home", "prefect", "work", "tmp"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return base | {
        "HOME": str(folder / "home"), "XDG_CACHE_HOME": str(folder / "home" / ".cache"),
        "PREFECT_HOME": str(folder / "prefect"), "LME_RUN__WORK_DIR": str(folder / "work"),
        "TMPDIR": str(folder / "tmp"),
    }  # fmt: skip


def _local_run(request: dict[str, Any], env: dict[str, str], folder: Path) -> tuple[float, float]:
    """The run in a new process: seconds of its benchmark() call, and of the whole process."""
    timing = folder / "timing.json"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LOCAL_RUNNER, json.dumps(request), str(timing)], cwd=ROOT,
        env=env, capture_output=True, text=True, timeout=7200, check=False,
    )  # fmt: skip
    process_s = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the local run failed:\n{done.stderr[-4000:]}")
    return float(json.loads(timing.read_text())["seconds"]), process_s


def _workers_online(timeout: float = 180) -> None:
    from prefect.client.orchestration import get_client

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with get_client(sync_client=True) as client:
            workers = client.read_workers_for_work_pool(POOL)
        if {w.name for w in workers if str(w.status.value) == "ONLINE"} >= set(WORKERS):
            return
        time.sleep(1)
    raise RuntimeError(f"the workers {sorted(WORKERS)} were not online within {timeout:.0f} s")


def _sharded_run(request: dict[str, Any], logs: Path, seen: set[Any], timeout: float) -> Sharded:
    """The scale-out deployment run, waited for; `seen`: flow runs of earlier runs (updated)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("benchmark/scale-out")
        started = time.perf_counter()
        parent = client.create_flow_run_from_deployment(
            deployment.id, parameters={"request": request}
        )
        deadline = time.monotonic() + timeout
        while True:
            run = client.read_flow_run(parent.id)
            if run.state and run.state.is_final():
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the scale-out run was not done within {timeout:.0f} s")
            time.sleep(1)
        wall = time.perf_counter() - started
        if run.state_name != "Completed":
            tails = "\n".join(f"{p.name}:\n{p.read_text()[-3000:]}" for p in logs.glob("*.log"))
            raise RuntimeError(f"the scale-out run ended {run.state_name}:\n{tails}")
        runs = client.read_flow_runs(limit=200)
        shards = [r for r in runs if r.id not in seen and re.search(r"shard [12]/2", r.name)]
        ids = [run.id, *(s.id for s in shards)]
        tasks = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=ids)), limit=200
        )
    seen.update(ids)
    if len(shards) != 2 or any(s.state_name != "Completed" for s in shards):
        raise RuntimeError(
            f"expected two completed shards, got {[(s.name, s.state_name) for s in shards]}"
        )
    submitted = {}
    for name in WORKERS:
        text = (logs / f"{name}.log").read_text(errors="replace")
        for flow_run in re.findall(r"submitting flow run '([0-9a-f-]{36})'", text):
            submitted[flow_run] = name
    span = max(s.end_time for s in shards) - min(s.start_time for s in shards)
    return Sharded(
        wall_s=wall, parent_s=(run.end_time - run.start_time).total_seconds(),
        shards_s=span.total_seconds(), flow_runs=[run, *shards],
        stage_tasks=[t.name for t in tasks if t.name.split(" ", 1)[0] in STAGES],
        submitted={str(r.id): submitted.get(str(r.id), "?") for r in [run, *shards]},
    )  # fmt: skip


def _compare(local: Path, pulled: Path) -> list[str]:
    """What differs between the two run folders beyond how the run was started (its series and
    schedule, the deployment's); [] when the tables, exports and figures are the same."""
    done = subprocess.run(
        [sys.executable, "scripts/compare_runs.py", str(local), str(pulled)], cwd=ROOT,
        capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    problems = []
    for section in re.findall(r"== (\S+): DIFFERENT", done.stdout):
        if section != "manifest.json":
            problems.append(section)
            continue
        body = done.stdout.split("== manifest.json: DIFFERENT", 1)[1].split("\n==", 1)[0]
        fields = {line.strip().split(":", 1)[0] for line in body.splitlines() if line.strip()}
        problems += sorted(f"manifest.json {f}" for f in fields - {"series", "schedule.deployment"})
    if done.returncode not in (0, 1) or (done.returncode == 1 and not problems and
                                         "DIFFERENT" not in done.stdout):  # fmt: skip
        problems.append(f"compare_runs.py exited {done.returncode}: {done.stderr[-2000:]}")
    names = {p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()}
    theirs = {p.relative_to(pulled).as_posix() for p in pulled.rglob("*") if p.is_file()}
    problems += [f"only the local run has {n}" for n in sorted(names - theirs)]
    problems += [f"only the bucket's run has {n}" for n in sorted(theirs - names)]
    return problems


def _model_calls(run_dir: Path) -> int:
    """The model calls the run's tables record (ingestion, answers, judging)."""
    import pyarrow.parquet as pq

    tables = [run_dir / f"{t}.parquet" for t in ("ingest", "hypotheses", "scores")]
    return sum(sum(pq.read_table(p).column("llm_calls").to_pylist()) for p in tables if p.is_file())


def _bucket(endpoint: str, prefix: str) -> Counter[str]:
    """Objects and bytes under `prefix`, by the folder below it."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    found: Counter[str] = Counter()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for item in page.get("Contents", []):
            parts = item["Key"][len(prefix) :].split("/")
            where = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
            found[f"{where} objects"] += 1
            found[f"{where} bytes"] += item["Size"]
    return found


def _folder_report(folder: Path) -> tuple[list[str], list[str]]:
    """A worker's working folder: its entries, and those that are no scratch (a run folder)."""
    work = folder / "work"
    entries = sorted(p.name for p in work.iterdir())
    kept = [n for n in entries if not SCRATCH.fullmatch(n)]
    kept += [str(p.relative_to(folder)) for p in folder.rglob("manifest.json")]
    kept += [str(p.relative_to(folder)) for p in folder.rglob("*.parquet")]
    return entries, sorted(set(kept))


def _round(
    index: int, args: argparse.Namespace, data: Path, tmp: Path, envs: dict[str, dict[str, str]],
    seen: set[Any],
) -> dict[str, Any]:  # fmt: skip
    """One round: the run on local disk, in one process on S3, and sharded on S3."""
    run_id = f"s{args.questions}-round-{index}"
    url = f"s3://{BUCKET}/round-{index}"
    local, single = tmp / f"local-{index}", tmp / f"single-{index}"
    request = {"config": "configs/default.toml", "dataset": str(data), "run_id": run_id}
    local_request = request | {"results_dir": str(local / "results"),
                               "overrides": {"cache.storage": str(local / "cache")}}  # fmt: skip
    single_request = request | {"results_dir": f"{url}/single/runs",
                                "overrides": {"cache.storage": f"{url}/single/cache"}}  # fmt: skip
    sharded_request = request | {
        "results_dir": f"{url}/runs", "shards": 2, "shard_deployment": "benchmark/shard",
        "shard_queues": list(QUEUES), "overrides": {"cache.storage": f"{url}/cache"},
    }  # fmt: skip
    local_env = _own_folders(envs["base"], local) | {"LME_RUN__WORK_DIR": ""}
    single_env = _own_folders(envs["base"], single)
    row: dict[str, Any] = {"round": index + 1, "run_id": run_id, "url": url}
    order = ("local", "s3", "sharded") if index % 2 == 0 else ("sharded", "s3", "local")
    for which in order:
        if which == "local":
            row["local_s"], row["local_process_s"] = _local_run(local_request, local_env, local)
            seconds = row["local_s"]
        elif which == "s3":
            row["s3_s"], row["s3_process_s"] = _local_run(single_request, single_env, single)
            seconds = row["s3_s"]
        else:
            row["sharded"] = _sharded_run(sharded_request, tmp / "logs", seen, args.timeout)
            seconds = row["sharded"].wall_s
        print(f"round {index + 1}, {which}: {seconds:.1f} s (load {_load()})", flush=True)
    row["request"], row["local_dir"] = sharded_request, local / "results" / run_id
    return row


def _load() -> str:
    return " ".join(f"{n:.1f}" for n in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=7200, help="seconds a run may take")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    parser.add_argument("--keep", type=Path, help="copy the workers' logs here at the end")
    args = parser.parse_args()
    data = (args.data_dir / f"lme_s_{args.questions}_seed0.json").resolve()
    if not data.exists():
        generate_dataset(data, n_questions=args.questions, scale="s", seed=0)
    from lme_bench.results.run_mirror import pull_run

    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lme-bench-sharded-s3-") as name:
        tmp = Path(name)
        (tmp / "logs").mkdir()
        os.environ.update(S3_KEYS)  # the made-up keys, for this process's clients too
        endpoint, s3 = start_s3_server(tmp / "seaweedfs")
        port = free_port()
        base = _environment(tmp, port, endpoint)
        os.environ.update(base | {"PREFECT_HOME": str(tmp / "client")})  # this process's client
        server = spawn([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1",
                        "--port", str(port)], base, tmp / "logs" / "server.log")  # fmt: skip
        started = [server]
        try:
            wait_prefect(base["PREFECT_API_URL"])
            prefect_cli(base, "work-pool", "create", POOL, "--type", "process", "--overwrite")
            for queue in QUEUES:
                prefect_cli(base, "work-queue", "create", queue, "--pool", POOL)
            prefect_cli(base, "--no-prompt", "deploy", "--all", "--prefect-file",
                        "deployments/prefect.yaml")  # fmt: skip
            envs = {"base": base} | {w: _own_folders(base, tmp / w) for w in WORKERS}
            for worker, queue in WORKERS.items():
                command = [str(BIN / "prefect"), "worker", "start", "--pool", POOL,
                           "--work-queue", queue, "--name", worker, "--limit", "1"]  # fmt: skip
                started.append(spawn(command, envs[worker], tmp / "logs" / f"{worker}.log"))
            _workers_online()
            seen: set[Any] = set()
            rows = [_round(i, args, data, tmp, envs, seen) for i in range(args.rounds)]
            last = rows[-1]
            pulled = pull_run(f"{last['url']}/runs", tmp / "pulled", last["run_id"])
            assert pulled is not None
            failures += [f"compared: {p}" for p in _compare(last["local_dir"], pulled)]
            single = pull_run(f"{last['url']}/single/runs", tmp / "pulled-single", last["run_id"])
            assert single is not None
            failures += [f"one process compared: {p}" for p in _compare(last["local_dir"], single)]
            first: Sharded = last["sharded"]
            placed = first.submitted
            if sorted(placed.values()) != sorted(WORKERS):
                failures.append(f"flow runs not one a worker: {placed}")
            if first.stage_tasks == []:
                failures.append("the first sharded run ran no stage task")
            rerun = _sharded_run(last["request"], tmp / "logs", seen, args.timeout)
            print(f"rerun, sharded on S3: {rerun.wall_s:.1f} s", flush=True)
            if rerun.stage_tasks:
                failures.append(f"the rerun ran stages: {sorted(set(rerun.stage_tasks))[:10]}")
            again = pull_run(f"{last['url']}/runs", tmp / "pulled-again", last["run_id"])
            assert again is not None
            failures += [f"rerun compared: {p}" for p in _compare(last["local_dir"], again)]
            calls = {"run": _model_calls(pulled), "rerun": _model_calls(again)}
            failures += [f"the {k} records {n} model calls" for k, n in calls.items() if n]
            bucket = _bucket(endpoint, f"round-{args.rounds - 1}/")
        finally:
            for process in reversed(started):
                stop_group(process)
            s3.kill()
            s3.wait()
        folders = {w: _folder_report(tmp / w) for w in WORKERS}
        if args.keep:
            shutil.copytree(tmp / "logs", args.keep, dirs_exist_ok=True)
    for worker in WORKERS:  # the run is in the bucket only
        if folders[worker][1]:
            failures.append(f"{worker} kept {folders[worker][1]}")
    print(f"\nmodel calls recorded: run {calls['run']}, rerun {calls['rerun']}")
    _print(args, rows, rerun, bucket, folders, failures)
    sys.exit(1 if failures else 0)


def _print(
    args: argparse.Namespace, rows: list[dict[str, Any]], rerun: Sharded, bucket: Counter[str],
    folders: dict[str, tuple[list[str], list[str]]], failures: list[str],
) -> None:  # fmt: skip
    print(f"\nS x {args.questions}, retrieval-only (configs/default.toml), {args.rounds} round(s)")
    print("| round | local disk | S3, one process | S3 / local | sharded on S3, submitted to done"
          " | its parent flow run | its shards' span | sharded / local |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        s: Sharded = row["sharded"]
        print(f"| {row['round']} | {row['local_s']:.1f} s ({row['local_process_s']:.1f} s) |"
              f" {row['s3_s']:.1f} s ({row['s3_process_s']:.1f} s) |"
              f" **{row['s3_process_s'] / row['local_process_s']:.2f}x** | {s.wall_s:.1f} s |"
              f" {s.parent_s:.1f} s | {s.shards_s:.1f} s |"
              f" **{s.wall_s / row['local_process_s']:.2f}x** |")  # fmt: skip
    print(f"| rerun | | | | {rerun.wall_s:.1f} s | {rerun.parent_s:.1f} s | {rerun.shards_s:.1f} s"
          f" | stage tasks run: {len(rerun.stage_tasks)} |")  # fmt: skip
    print(
        "(local disk and S3, one process: the benchmark() call, in brackets its whole process;"
        " the ratios are of whole processes, and of the sharded run's submission to its end)"
    )
    print("\nflow runs of the first sharded run, by worker:",
          ", ".join(sorted(rows[-1]["sharded"].submitted.values())))  # fmt: skip
    print("bucket, last round:")
    for key in sorted(k for k in bucket if k.endswith(" objects")):
        where = key.removesuffix(" objects")
        print(f"  {where}: {bucket[key]:,} objects, {bucket[where + ' bytes'] / 1e6:.1f} MB")
    for worker, (entries, kept) in folders.items():
        print(
            f"{worker} working folder: {', '.join(entries) or 'empty'}; run files: {kept or 'none'}"
        )
    print("checks:", "all held" if not failures else "FAILED")
    for failure in failures:
        print(f"  {failure}")


if __name__ == "__main__":
    main()
