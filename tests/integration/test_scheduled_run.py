"""A run the deployment's schedule started gets a new run id, whatever its config and its
parameters say, and is in the deployment's series: on a real Prefect server, the flow run
made by the server's own scheduling (auto-scheduled), run by the process worker."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
from prefect.client.schemas.objects import FlowRun

from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import FakeLlm, api_client, write_config

pytestmark = pytest.mark.integration

NAME = "it-scheduled"
PINNED = "pinned-by-parameters"


def _spec(folder: Path, config: Path) -> Path:
    """A deployment on a daily schedule whose parameters pin a run id (as the shipped smoke
    deployment does), beside the shipped ones; made from the flow's old entrypoint, as a
    deployment from before the flow was renamed `benchmark` is: it still runs, as
    `longmemeval/<name>`."""
    request = {"config": str(config), "run_id": PINNED, "limit": 2, "stages": ["ingest"]}
    spec = folder / "prefect.yaml"
    spec.write_text(
        f"""name: lme-bench-it
pull:
  - prefect.deployments.steps.set_working_directory:
      directory: "{{{{ $LME_BENCH_ROOT }}}}"
deployments:
  - name: {NAME}
    entrypoint: flows/longmemeval.py:longmemeval
    tags: [lme-bench]
    parameters:
      request: {json.dumps(request)}
    schedules:
      - interval: 86400
        anchor_date: "2026-01-01T00:00:00+00:00"
    work_pool:
      name: lme-bench
""",
        encoding="utf-8",
    )
    return spec


def _scheduled_run(stack: PrefectStack, deployment_id: str, timeout: float) -> FlowRun:
    """Have the server schedule the deployment's run of the last day (due now), as its
    scheduler does, then wait for it to end."""
    now = datetime.now(UTC)
    with api_client(stack) as client:
        response = client._client.post(
            f"/deployments/{deployment_id}/schedule",
            json={
                "start_time": (now - timedelta(days=1)).isoformat(),
                "end_time": now.isoformat(),
                "max_runs": 1,
            },
        )
        response.raise_for_status()
        only = DeploymentFilter(name=DeploymentFilterName(any_=[NAME]))
        deadline = time.monotonic() + timeout
        while True:
            runs = [r for r in client.read_flow_runs(deployment_filter=only) if r.auto_scheduled]
            due = [r for r in runs if r.expected_start_time and r.expected_start_time <= now]
            if due and due[0].state is not None and due[0].state.is_final():
                return due[0]
            if time.monotonic() > deadline:
                states = [(r.name, r.state_name) for r in runs]
                raise TimeoutError(f"the scheduled run did not end: {states}")
            time.sleep(1.0)


def test_a_scheduled_run_gets_a_new_run_id_and_the_deployment_s_series(
    prefect: PrefectStack, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    config = write_config(tmp_path, fake_llm.base_url)
    text = config.read_text().replace("[run]\n", '[run]\nid = "pinned-by-config"\n')
    config.write_text(text)  # the config pins a run id too
    deployed = prefect.prefect(
        "--no-prompt", "deploy", "--all", "--prefect-file", str(_spec(tmp_path, config))
    )
    assert deployed.returncode == 0, f"{deployed.stdout}\n{deployed.stderr}"
    with api_client(prefect) as client:
        deployment = client.read_deployment_by_name(f"longmemeval/{NAME}")
    try:
        run = _scheduled_run(prefect, str(deployment.id), timeout=240)
    finally:
        with api_client(prefect) as client:
            client.delete_deployment(deployment.id)  # no further scheduled runs
    assert run.state_name == "Completed", prefect.log_tail("worker")
    assert run.name.startswith("longmemeval run-"), run.name  # neither pinned id
    with api_client(prefect) as client:
        assert client.read_flow(run.flow_id).name == "longmemeval"  # the old name, kept

    results = tmp_path / "results"
    (run_dir,) = [p for p in results.iterdir() if (p / "manifest.json").is_file()]
    assert run_dir.name.startswith("run-") and run_dir.name in run.name
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["series"] == NAME
    schedule = manifest["schedule"]
    assert schedule["deployment"] == NAME and schedule["auto_scheduled"] is True
    assert schedule["flow_run_id"] == str(run.id)
