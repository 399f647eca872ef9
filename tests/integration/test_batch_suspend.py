"""`[judge] batch = true` on a real Prefect server and process worker: the smoke deployment's
run suspends while the batch job runs (no worker process is left running it), a restart of the
run while the job still runs finds the same job and suspends again, and once the job has ended
a run of the batch-check/watch deployment resumes it to completion, with the job's verdicts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import pyarrow.parquet as pq
import pytest
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName, FlowRunFilter
from prefect.client.schemas.objects import FlowRun
from prefect.flow_runs import resume_flow_run
from prefect.settings import PREFECT_API_URL, temporary_settings

from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import FakeLlm, api_client, flow_run_id, read_flow_run, write_config
from tests.providers.fake_batch_server import serve_batches

pytestmark = pytest.mark.integration

JUDGE = "lab:gpt-4o-2024-08-06"


def _batch_config(folder: Path, llm_url: str, batch_url: str) -> Path:
    config = write_config(folder, llm_url)
    text = config.read_text().replace('judge = "fakeai:it-judge"', f'judge = "{JUDGE}"')
    text += (
        f'\n[providers.lab]\nkind = "openai-compatible"\nbase_url = "{batch_url}"\n'
        "\n[judge]\nbatch = true\nbatch_poll_s = 2\n"
    )
    config.write_text(text)
    return config


def _wait_until(
    what: str, found: Callable[[], FlowRun], ok: Callable[[FlowRun], bool], within_s: float = 150
) -> FlowRun:
    deadline = time.monotonic() + within_s
    while True:
        run = found()
        if ok(run):
            return run
        if time.monotonic() > deadline:
            state = run.state.name if run.state else None
            raise TimeoutError(f"{what}: flow run still {state} (run count {run.run_count})")
        time.sleep(1.0)


def _check_runs(stack: PrefectStack) -> list[FlowRun]:
    only = DeploymentFilter(name=DeploymentFilterName(any_=["watch"]))
    with api_client(stack) as client:
        return client.read_flow_runs(deployment_filter=only, flow_run_filter=FlowRunFilter())


def test_run_suspends_while_the_job_runs_and_resumes_when_it_ends(
    prefect: PrefectStack, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    with serve_batches() as (batch_url, fake):
        fake.hold = True
        config = _batch_config(tmp_path, fake_llm.base_url, batch_url)
        request = {"config": str(config), "run_id": "batched", "limit": 3}
        started = prefect.prefect(
            "deployment", "run", "benchmark/smoke", "--params", json.dumps({"request": request})
        )
        assert started.returncode == 0, started.stderr
        run_id: UUID = flow_run_id(started.stdout)

        def suspended(run: FlowRun) -> bool:
            return run.state is not None and run.state.name == "Suspended"

        first = _wait_until("first suspension", lambda: read_flow_run(prefect, run_id), suspended)
        assert len(fake.batches) == 1
        (job_id,) = fake.batches
        record = next((tmp_path / "results" / "batched" / "batches").glob("judge-*.json"))
        assert json.loads(record.read_text())["job_id"] == job_id

        # restarted while the job runs: the same job is looked at, and the run suspends again
        with temporary_settings({PREFECT_API_URL: prefect.api_url}):
            resume_flow_run(run_id)
        _wait_until(
            "second suspension",
            lambda: read_flow_run(prefect, run_id),
            lambda run: (
                suspended(run)
                and run.state is not None
                and first.state is not None
                and run.state.id != first.state.id
            ),
        )
        assert list(fake.batches) == [job_id]
        assert _check_runs(prefect)  # the run is watched by a scheduled check

        fake.hold = False  # the job ends; a check resumes the run
        done = _wait_until(
            "completion",
            lambda: read_flow_run(prefect, run_id),
            lambda run: run.state is not None and run.state.is_final(),
        )
        assert done.state is not None and done.state.is_completed(), prefect.log_tail("worker")
        assert list(fake.batches) == [job_id] and not fake.chat_requests
    scores = pq.read_table(tmp_path / "results" / "batched" / "scores.parquet").to_pylist()
    llm = [s for s in scores if s["judge_kind"] == "llm"]
    assert len(llm) == 3 and {s["status"] for s in llm} == {"ok"}
    manifest = json.loads((tmp_path / "results" / "batched" / "manifest.json").read_text())
    assert [b["job_id"] for b in manifest["batches"]] == [job_id]


def test_answers_then_verdicts_each_suspend_the_run_once(
    prefect: PrefectStack, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    with serve_batches() as (batch_url, fake):
        config = _batch_config(tmp_path, fake_llm.base_url, batch_url)
        text = config.read_text().replace('qa = "fakeai:it-reader"', 'qa = "lab:it-reader"')
        config.write_text(text.replace('strategy = "single"', 'strategy = "single"\nbatch = true'))
        request = {"config": str(config), "run_id": "both", "limit": 3}
        started = prefect.prefect(
            "deployment", "run", "benchmark/smoke", "--params", json.dumps({"request": request})
        )
        assert started.returncode == 0, started.stderr
        run_id = flow_run_id(started.stdout)
        try:
            done = _wait_until(
                "completion",
                lambda: read_flow_run(prefect, run_id),
                lambda run: run.state is not None and run.state.is_final(),
                within_s=420,  # two suspensions, each waiting for the worker to pick a check
            )
        except TimeoutError as exc:
            raise AssertionError(f"{exc}\n{prefect.log_tail('worker', 100)}") from None
        assert done.state is not None and done.state.is_completed(), prefect.log_tail("worker")
        assert len(fake.batches) == 2 and not fake.chat_requests
    with api_client(prefect) as client:
        states = client.read_flow_run_states(run_id)
    assert [s.name for s in states].count("Suspended") == 2
    hypotheses = pq.read_table(tmp_path / "results" / "both" / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == 3 and {h["status"] for h in hypotheses} == {"ok"}
    manifest = json.loads((tmp_path / "results" / "both" / "manifest.json").read_text())
    assert sorted(b["stage"] for b in manifest["batches"]) == ["answer", "judge"]
