"""What the tests of scale-out on workers that share no disk have in common: a real Prefect
server with the project's deployments, a `parent` worker on the pool's default queue and two
shard workers (`worker-a`, `worker-b`) each on a queue of its own, every worker with its own
HOME, PREFECT_HOME, working folder and temp folder; results and task cache in a bucket of a real
S3 server (SeaweedFS on loopback); the same run on local disk to compare with; and the checks
made on a run that came back from the bucket."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.integration.prefect_server import (
    BIN,
    POOL,
    ROOT,
    PrefectStack,
    _spawn,
    clean_environ,
    free_port,
    stop,
    wait_healthy,
)
from tests.integration.runs import KEY_ENV, KEY_VALUE, api_client, flow_run_id
from tests.s3_server import S3Server

SHARD_QUEUES = ("shard-a", "shard-b")  # shard i goes to queue i mod 2, polled by one worker each
WORKERS = ("parent", "worker-a", "worker-b")
STAGES = ("ingest", "retrieval", "answer", "judge")
FINAL = {"Completed", "Failed", "Crashed", "Cancelled"}
# Columns that together name a row of a run's table (those of scripts/compare_runs.py).
KEY_COLUMNS = ("question_id", "granularity", "session_index", "judge", "repeat")
# What a shard worker's working folder may hold afterwards: scratch a later run reuses or
# rebuilds (the memory store and the backends' data folders, ingestion checkpoints, the memory
# title key, dataset splits, build locks), never a run folder.
SCRATCH = re.compile(
    r"(memory\.sqlite|checkpoints\.sqlite)(-wal|-shm|-journal)?|\.memory-title-key|\.cache|"
    r"\.locks?|.*\.lock|build-locks|backends"
)


@dataclass
class SharedNothing:
    """The Prefect server and each worker's environment; the workers start with each run."""

    stack: PrefectStack
    envs: dict[str, dict[str, str]]  # by worker name
    logs: Path
    folder: Path  # the test's temporary folder: each worker's folders are under it by name
    runs: int = 0  # sharded runs started: each writes its workers' logs apart

    def log(self, worker: str) -> str:
        """What `worker` logged during the latest sharded run."""
        return (self.logs / f"run{self.runs}-{worker}.log").read_text(errors="replace")


def overrides(base_url: str) -> dict[str, Any]:
    """Reader and judge on the loopback fake model."""
    return {
        "models.qa": "fakeai:it-reader",
        "models.judge": "fakeai:it-judge",
        "providers.fakeai.kind": "openai-compatible",
        "providers.fakeai.base_url": base_url,
        "providers.fakeai.api_key_env": KEY_ENV,
    }


def scale_out_request(bucket: str, base_url: str, run_id: str, questions: int) -> dict[str, Any]:
    """The scale-out deployment's request: two shards, results and cache in the bucket."""
    return {
        "config": "configs/default.toml",
        "results_dir": f"s3://{bucket}/runs",
        "run_id": run_id,
        "limit": questions,
        "shards": 2,
        "shard_deployment": "benchmark/shard",
        "shard_queues": list(SHARD_QUEUES),
        "overrides": overrides(base_url) | {"cache.storage": f"s3://{bucket}/cache"},
    }


def _worker_env(base: dict[str, str], folder: Path, s3: S3Server) -> dict[str, str]:
    for name in ("home", "prefect", "work", "tmp"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return (
        base
        | s3.environment()
        | {
            KEY_ENV: KEY_VALUE,
            "HOME": str(folder / "home"),
            "XDG_CACHE_HOME": str(folder / "home" / ".cache"),
            "PREFECT_HOME": str(folder / "prefect"),
            "LME_RUN__WORK_DIR": str(folder / "work"),
            "TMPDIR": str(folder / "tmp"),
        }
    )


@contextmanager
def shared_nothing(folder: Path, s3: S3Server) -> Iterator[SharedNothing]:
    """A Prefect server with the pool, the shard queues and the project's deployments; the
    server stops on leaving."""
    port, logs = free_port(), folder / "logs"
    logs.mkdir()
    base = clean_environ() | {
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "LME_BENCH_ROOT": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    server_env = base | {"PREFECT_HOME": str(folder / "server")}
    stack = PrefectStack(port=port, home=folder / "server", env=server_env, logs=logs)
    args = ["server", "start", "--host", "127.0.0.1", "--port", str(port)]
    server = _spawn([str(BIN / "prefect"), *args], server_env, logs / "server.log")
    envs = {name: _worker_env(base, folder / name, s3) for name in WORKERS}
    try:
        wait_healthy(stack.api_url, server, 90)
        for command in (
            ("work-pool", "create", POOL, "--type", "process", "--overwrite"),
            *(("work-queue", "create", queue, "--pool", POOL) for queue in SHARD_QUEUES),
            ("--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"),
        ):
            done = stack.prefect(*command)
            assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        yield SharedNothing(stack, envs, logs, folder)
    finally:
        stop(server)


def local_run(setup: SharedNothing, request: dict[str, Any]) -> Path:
    """The same run on local disk, in one process, no shards; its run folder."""
    local = setup.folder / "local"
    script = local / "run.py"
    local.mkdir()
    script.write_text(
        "import json, sys\n"
        "from lme_bench_flows.benchmark import benchmark\n"
        "from lme_bench.run.request import RunRequest\n"
        "benchmark(RunRequest(**json.loads(sys.argv[1])))\n"
    )
    asked = {k: v for k, v in request.items() if not k.startswith("shard")}
    kept = {k: v for k, v in request["overrides"].items() if k != "cache.storage"}
    asked |= {"results_dir": str(local / "results"), "overrides": kept}
    ran = subprocess.run(
        [sys.executable, str(script), json.dumps(asked)],
        cwd=ROOT, env=setup.envs["parent"] | {"LME_RUN__WORK_DIR": "", "HOME": str(local)},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-4000:]
    return local / "results" / str(request["run_id"])


def _state(stack: PrefectStack, run_id: Any) -> str:
    with api_client(stack) as client:
        return str(client.read_flow_run(run_id).state_name)


def _wait(stack: PrefectStack, run_id: Any, states: set[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = _state(stack, run_id)
        if state in states:
            return state
        time.sleep(1)
    raise TimeoutError(f"flow run {run_id} not in {states} within {timeout:.0f} s")


def _worker(name: str, queue: str) -> list[str]:
    args = ["worker", "start", "--pool", POOL, "--work-queue", queue, "--name", name]
    return [str(BIN / "prefect"), *args, "--limit", "1"]


def worker_logs(setup: SharedNothing) -> str:
    """The end of each worker's log of the latest sharded run."""
    return "\n".join(f"== {n}\n{setup.log(n)[-4000:]}" for n in setup.envs)


def sharded_run(
    setup: SharedNothing, request: dict[str, Any], expect: str = "Completed"
) -> tuple[Any, dict[str, str]]:
    """The scale-out deployment run: its parent taken by the `parent` worker (the pool's default
    queue), its shards by the two shard workers, each polling the queue its shard is sent to
    (`shard_queues`), one flow run at a time each; the parent must end in state `expect`.
    Returns the parent's id and which worker submitted each of its flow runs."""
    stack, envs = setup.stack, setup.envs
    setup.runs += 1
    logs = {name: setup.logs / f"run{setup.runs}-{name}.log" for name in envs}
    started = [_spawn(_worker("parent", "default"), envs["parent"], logs["parent"])]
    try:
        cli = stack.prefect(
            "deployment", "run", "benchmark/scale-out", "--params", json.dumps({"request": request})
        )  # fmt: skip
        assert cli.returncode == 0, f"{cli.stdout}\n{cli.stderr}"
        parent = flow_run_id(cli.stdout)
        for name, queue in zip(("worker-a", "worker-b"), SHARD_QUEUES, strict=True):
            started.append(_spawn(_worker(name, queue), envs[name], logs[name]))
        state = _wait(stack, parent, FINAL, 600)
        assert state == expect, worker_logs(setup)
    finally:
        for process in reversed(started):
            stop(process)
    submitted = {}
    for name in envs:
        for run in re.findall(r"submitting flow run '([0-9a-f-]{36})'", setup.log(name)):
            submitted[run] = name
    return parent, submitted


def shard_runs(stack: PrefectStack, parent: Any, seen: frozenset[Any] = frozenset()) -> list[Any]:
    """The shard flow runs not in `seen` (the parent's, once a run's earlier shards are seen)."""
    with api_client(stack) as client:
        runs = client.read_flow_runs(limit=200)
    shard = re.compile(r"shard [12]/2")
    return [r for r in runs if r.id != parent and r.id not in seen and shard.search(r.name)]


def stage_task_runs(stack: PrefectStack, runs: list[Any]) -> list[str]:
    """The names of the stage task runs (ingest, retrieval, answer, judge, batches) of `runs`."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with api_client(stack) as client:
        found = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=runs)), limit=200
        )
    return [t.name for t in found if t.name.split(" ", 1)[0] in (*STAGES, "question-batch")]


def assert_same_as_local(local: Path, pulled: Path) -> None:
    """The same tables, exports and figures as the local run (scripts/compare_runs.py); the
    manifest differs only in how the run was started (its series and schedule are the
    deployment's)."""
    compared = subprocess.run(
        [sys.executable, "scripts/compare_runs.py", str(local), str(pulled)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    differing = re.findall(r"== (\S+): DIFFERENT", compared.stdout)
    assert differing in ([], ["manifest.json"]), compared.stdout + compared.stderr
    manifest = compared.stdout.split("== manifest.json: DIFFERENT", 1)[-1].split("==", 1)[0]
    lines = [line.strip() for line in manifest.splitlines() if line.strip()]
    fields = {line.split(":", 1)[0] for line in lines}
    assert fields <= {"series", "schedule.deployment"}, compared.stdout


def repeated_keys(run_dir: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every Parquet table of the run folder whose rows repeat a key, with the keys repeated."""
    repeated = {}
    tables = sorted(run_dir.rglob("*.parquet"))
    assert tables, f"no table in {run_dir}"
    for path in tables:
        names = pq.read_schema(path).names
        keys = [c for c in KEY_COLUMNS if c in names]
        assert keys, f"{path.name}: none of the key columns {KEY_COLUMNS}"
        rows = pq.read_table(path, columns=keys).to_pylist()
        counts = Counter(tuple(row[k] for k in keys) for row in rows)
        if twice := [key for key, n in counts.items() if n > 1]:
            repeated[str(path.relative_to(run_dir))] = twice
    return repeated


def shard_work_left(folder: Path) -> list[str]:
    """What a shard worker's working folder holds beside scratch (nothing, after a run)."""
    return sorted(p.name for p in (folder / "work").iterdir() if not SCRATCH.fullmatch(p.name))
