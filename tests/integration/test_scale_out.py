"""Scale-out on Prefect itself: the scale-out deployment splits a run into two child flow runs
of the shard deployment, picked up by two process workers of one pool, then reports the whole
run from the shards' cached work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from tests.integration.prefect_server import BIN, POOL, PrefectStack, _spawn, stop
from tests.integration.runs import KEY_ENV, KEY_VALUE, FakeLlm, api_client, write_config

pytestmark = pytest.mark.integration

QUESTIONS = 6


def test_two_workers_share_a_sharded_run(
    prefect: PrefectStack, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    second_log = prefect.logs / "second-worker.log"
    args = ["worker", "start", "--pool", POOL, "--name", "it-second-worker"]
    second = _spawn([str(BIN / "prefect"), *args], prefect.env | {KEY_ENV: KEY_VALUE}, second_log)
    try:
        config = write_config(tmp_path, fake_llm.base_url)
        request = {
            "config": str(config),
            "run_id": "sharded",
            "limit": QUESTIONS,
            "shards": 2,
            "shard_deployment": "benchmark/shard",
        }
        cli = prefect.prefect(
            "deployment", "run", "benchmark/scale-out", "--watch",
            "--params", json.dumps({"request": request}), timeout=420,
        )  # fmt: skip
        assert cli.returncode == 0, f"{cli.stdout}\n{cli.stderr}\n{prefect.log_tail('worker')}"
    finally:
        stop(second)

    with api_client(prefect) as client:
        runs = [r for r in client.read_flow_runs(limit=200) if "sharded" in r.name]
        names = {r.name: r.state_name for r in runs}
        shards = [name for name in names if re.search(r"shard [12]/2", name)]
        assert len(shards) == 2 and all(names[s] == "Completed" for s in shards), names
        (parent,) = [r for r in runs if r.name not in shards]
        assert parent.name == f"benchmark sharded ({config})", names
        assert parent.state_name == "Completed", names
        only_parent = FlowRunFilter(id=FlowRunFilterId(any_=[parent.id]))
        keys = {a.key for a in client.read_artifacts(flow_run_filter=only_parent)}
    assert {"run-summary", "retrieval-summary", "qa-scores"} <= keys  # on the parent run

    run_dir = tmp_path / "results" / "sharded"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == [] and len(manifest["question_ids"]) == QUESTIONS
    for table in ("retrieval", "hypotheses", "scores"):
        rows = pq.read_table(run_dir / f"{table}.parquet").to_pylist()
        assert {r["question_id"] for r in rows} == set(manifest["question_ids"]), table
    # every flow run of the sharded run was started by one of the pool's two workers
    started = re.findall(
        r"submitting flow run '([0-9a-f-]{36})'", prefect.log_tail("worker", 10_000)
    )
    started += re.findall(r"submitting flow run '([0-9a-f-]{36})'", second_log.read_text())
    deployed = {str(r.id) for r in runs if r.deployment_id is not None}
    assert deployed and deployed <= set(started)


def test_shipped_deployments_write_run_folders_of_their_own(prefect: PrefectStack) -> None:
    """`make run` writes results/sample (configs/default.toml's run id): the shipped smoke and
    scale-out deployments, on the same config, keep to folders of their own."""
    with api_client(prefect) as client:
        run_ids = {
            name: client.read_deployment_by_name(f"benchmark/{name}").parameters["request"][
                "run_id"
            ]
            for name in ("smoke", "scale-out")
        }
    assert run_ids == {"smoke": "smoke", "scale-out": "scale-out"}
