"""Scale-out on workers that share no disk: the scale-out deployment with results and task cache
in a bucket of a real S3 server (SeaweedFS on loopback), its parent on a worker of its own and
its two shards on two more process workers, each worker with its own HOME, PREFECT_HOME,
working folder and temp folder; only the Prefect server, the bucket and the model server are
shared. The run matches the same run on local disk, a rerun makes no model call and runs no
stage, and the shard workers keep no run folder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lme_bench.results.run_mirror import pull_run
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
from tests.integration.runs import KEY_ENV, KEY_VALUE, FakeLlm, api_client, flow_run_id
from tests.s3_server import S3Server, s3_bucket, s3_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]
__all__ = ["s3_bucket", "s3_server"]

QUESTIONS = 4
RUN_ID = "no-shared-disk"
SHARD_QUEUES = ("shard-a", "shard-b")  # shard i goes to queue i mod 2, polled by one worker each
STAGES = ("ingest", "retrieval", "answer", "judge")
# What a shard worker's working folder may hold afterwards: scratch a later run reuses or
# rebuilds (the memory store and the backends' data folders, ingestion checkpoints, the memory
# title key, dataset splits, build locks), never a run folder.
SCRATCH = re.compile(
    r"(memory\.sqlite|checkpoints\.sqlite)(-wal|-shm|-journal)?|\.memory-title-key|\.cache|"
    r"\.locks?|.*\.lock|build-locks|backends"
)


def _overrides(base_url: str) -> dict[str, Any]:
    return {
        "models.qa": "fakeai:it-reader",
        "models.judge": "fakeai:it-judge",
        "providers.fakeai.kind": "openai-compatible",
        "providers.fakeai.base_url": base_url,
        "providers.fakeai.api_key_env": KEY_ENV,
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


def _sharded_run(
    stack: PrefectStack, request: dict[str, Any], envs: dict[str, dict[str, str]], logs: Path
) -> tuple[Any, dict[str, str]]:
    """The scale-out deployment run: its parent taken by the `parent` worker (the pool's default
    queue), its shards by the two shard workers, each polling the queue its shard is sent to
    (`shard_queues`), one flow run at a time each. Returns the parent's id and which worker
    submitted each flow run."""
    started = [_spawn(_worker("parent", "default"), envs["parent"], logs / "parent.log")]
    try:
        cli = stack.prefect(
            "deployment", "run", "benchmark/scale-out", "--params", json.dumps({"request": request})
        )  # fmt: skip
        assert cli.returncode == 0, f"{cli.stdout}\n{cli.stderr}"
        parent = flow_run_id(cli.stdout)
        for name, queue in zip(("worker-a", "worker-b"), SHARD_QUEUES, strict=True):
            started.append(_spawn(_worker(name, queue), envs[name], logs / f"{name}.log"))
        state = _wait(stack, parent, {"Completed", "Failed", "Crashed"}, 600)
        assert state == "Completed", "\n".join(
            (logs / f"{n}.log").read_text(errors="replace")[-4000:] for n in envs
        )
    finally:
        for process in reversed(started):
            stop(process)
    submitted = {}
    for name in envs:
        text = (logs / f"{name}.log").read_text(errors="replace")
        for run in re.findall(r"submitting flow run '([0-9a-f-]{36})'", text):
            submitted[run] = name
    return parent, submitted


def _worker(name: str, queue: str) -> list[str]:
    args = [
        "worker",
        "start",
        "--pool",
        POOL,
        "--work-queue",
        queue,
        "--name",
        name,
        "--limit",
        "1",
    ]
    return [str(BIN / "prefect"), *args]


def _children(stack: PrefectStack, parent: Any, seen: frozenset[Any] = frozenset()) -> list[Any]:
    """The shard flow runs not in `seen` (the parent's, once a run's earlier shards are seen)."""
    with api_client(stack) as client:
        runs = client.read_flow_runs(limit=200)
    shard = re.compile(r"shard [12]/2")
    return [r for r in runs if r.id != parent and r.id not in seen and shard.search(r.name)]


def _stage_task_runs(stack: PrefectStack, runs: list[Any]) -> list[str]:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with api_client(stack) as client:
        found = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=runs)), limit=200
        )
    return [t.name for t in found if t.name.split(" ", 1)[0] in (*STAGES, "question-batch")]


def test_a_sharded_run_on_workers_sharing_no_disk(
    fake_llm: FakeLlm, s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    url = f"s3://{s3_bucket}/runs"
    overrides = _overrides(fake_llm.base_url)
    request = {
        "config": "configs/default.toml",
        "results_dir": url,
        "run_id": RUN_ID,
        "limit": QUESTIONS,
        "shards": 2,
        "shard_deployment": "benchmark/shard",
        "shard_queues": list(SHARD_QUEUES),
        "overrides": overrides | {"cache.storage": f"s3://{s3_bucket}/cache"},
    }
    port, logs = free_port(), tmp_path / "logs"
    logs.mkdir()
    base = clean_environ() | {
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "LME_BENCH_ROOT": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    server_env = base | {"PREFECT_HOME": str(tmp_path / "server")}
    stack = PrefectStack(port=port, home=tmp_path / "server", env=server_env, logs=logs)
    args = ["server", "start", "--host", "127.0.0.1", "--port", str(port)]
    server = _spawn([str(BIN / "prefect"), *args], server_env, logs / "server.log")
    envs = {
        n: _worker_env(base, tmp_path / n, s3_server) for n in ("parent", "worker-a", "worker-b")
    }
    try:
        wait_healthy(stack.api_url, server, 90)
        for command in (
            ("work-pool", "create", POOL, "--type", "process", "--overwrite"),
            *(("work-queue", "create", queue, "--pool", POOL) for queue in SHARD_QUEUES),
            ("--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"),
        ):
            done = stack.prefect(*command)
            assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"

        # the same run on local disk, in-process, for comparison
        local = tmp_path / "local"
        baseline = local / "run.py"
        local.mkdir()
        baseline.write_text(
            "import json, sys\n"
            "from lme_bench_flows.benchmark import benchmark\n"
            "from lme_bench.run.request import RunRequest\n"
            "benchmark(RunRequest(**json.loads(sys.argv[1])))\n"
        )
        asked = {k: v for k, v in request.items() if not k.startswith("shard")}
        asked |= {"results_dir": str(local / "results"), "overrides": overrides}
        ran = subprocess.run(
            [sys.executable, str(baseline), json.dumps(asked)],
            cwd=ROOT, env=envs["parent"] | {"LME_RUN__WORK_DIR": ""} | {"HOME": str(local)},
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-4000:]

        before = len(fake_llm.fake.requests)
        parent, submitted = _sharded_run(stack, request, envs, logs)
        shards = _children(stack, parent)
        assert len(shards) == 2 and all(s.state_name == "Completed" for s in shards)
        assert submitted[str(parent)] == "parent"
        assert {submitted[str(s.id)] for s in shards} == {"worker-a", "worker-b"}, submitted
        assert len(fake_llm.fake.requests) > before

        pulled = pull_run(url, tmp_path / "pulled", RUN_ID)
        assert pulled is not None
        compared = subprocess.run(
            [sys.executable, "scripts/compare_runs.py", str(local / "results" / RUN_ID),
             str(pulled)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        # the same tables, exports and figures; the manifest differs only in how the run was
        # started (its series and schedule are the deployment's)
        differing = re.findall(r"== (\S+): DIFFERENT", compared.stdout)
        assert differing in ([], ["manifest.json"]), compared.stdout + compared.stderr
        manifest = compared.stdout.split("== manifest.json: DIFFERENT", 1)[-1].split("==", 1)[0]
        lines = [line.strip() for line in manifest.splitlines() if line.strip()]
        fields = {line.split(":", 1)[0] for line in lines}
        assert fields <= {"series", "schedule.deployment"}, compared.stdout
        keys = {k["Key"] for k in s3_server.client().list_objects_v2(Bucket=s3_bucket)["Contents"]}
        for name in ("manifest.json", "retrieval.parquet", "hypotheses.parquet", "scores.parquet"):
            assert f"runs/{RUN_ID}/{name}" in keys
        assert any(k.startswith("runs/memory-builds/") for k in keys), keys

        # a rerun: every stage from the cache, no model called
        before = len(fake_llm.fake.requests)
        again, _ = _sharded_run(stack, request, envs, logs)
        assert len(fake_llm.fake.requests) == before
        seen = frozenset(s.id for s in shards)
        rerun = [again, *(s.id for s in _children(stack, again, seen))]
        assert _stage_task_runs(stack, rerun) == []
    finally:
        stop(server)

    for name in ("worker-a", "worker-b"):
        work = tmp_path / name / "work"
        left = sorted(p.name for p in work.iterdir() if not SCRATCH.fullmatch(p.name))
        assert left == [], (name, left)
        assert not list((tmp_path / name).rglob("manifest.json")), name
        assert not list((tmp_path / name).rglob("*.parquet")), name
