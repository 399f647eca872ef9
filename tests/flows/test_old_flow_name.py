"""The flow's old name: `flows/longmemeval.py:longmemeval`, the entrypoint of deployments made
before the flow was renamed `benchmark`, still loads, as a flow named `longmemeval` (Prefect names
such a deployment `longmemeval/<name>`) running the `benchmark` flow's code."""

from __future__ import annotations

from pathlib import Path

import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.client.orchestration import get_client
from prefect.flows import load_flow_from_entrypoint
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest

ROOT = Path(__file__).resolve().parents[2]
OLD_ENTRYPOINT = "flows/longmemeval.py:longmemeval"


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # entrypoints are relative to the repository, as deployments say


def test_the_old_entrypoint_loads_the_benchmark_flow_under_its_old_name(in_root: None) -> None:
    old = load_flow_from_entrypoint(OLD_ENTRYPOINT, use_placeholder_flow=False)
    new = load_flow_from_entrypoint("flows/benchmark.py:benchmark", use_placeholder_flow=False)
    assert (old.name, new.name) == ("longmemeval", "benchmark")
    assert old.fn is benchmark.fn  # the function itself (the new entrypoint loads its own copy)
    assert Path(new.fn.__code__.co_filename) == Path(old.fn.__code__.co_filename)
    assert new.fn.__code__.co_code == old.fn.__code__.co_code
    assert old.flow_run_name is benchmark.flow_run_name
    assert old.task_runner is benchmark.task_runner  # with_options keeps the flow's own
    assert old.log_prints is benchmark.log_prints is True
    assert old.parameters == benchmark.parameters


@pytest.mark.slow
def test_a_run_of_the_old_name_is_a_benchmark_run_named_after_it(
    in_root: None, tmp_path: Path
) -> None:
    old = load_flow_from_entrypoint(OLD_ENTRYPOINT, use_placeholder_flow=False)
    request = RunRequest(results_dir=str(tmp_path), run_id="old-name", limit=2)
    with prefect_test_harness(server_startup_timeout=120):
        state = old(request, return_state=True)
        result = state.result()
        with get_client(sync_client=True) as client:
            run = client.read_flow_run(state.state_details.flow_run_id)
            flow_name = client.read_flow(run.flow_id).name
    assert flow_name == "longmemeval"
    assert run.name == "longmemeval old-name (configs/default.toml)", run.name
    assert result["run_dir"] == str(tmp_path / "old-name")
    assert (tmp_path / "old-name" / "summary.json").is_file()
