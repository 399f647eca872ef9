"""Each run's id and series: a scheduled run always gets a new run id, whatever its config or
parameters say; a deployment run is in the deployment's series, any other in `[run] series`
or its config's stem; a rerun stays in the series its run id recorded first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lme_bench_flows import benchmark as flow_module
from lme_bench_flows import run_origin

from lme_bench.config.settings import load_settings
from lme_bench.results.series import RunSchedule, config_digest, manifest_series, series_name
from lme_bench.run.request import RunRequest


def _config(tmp_path: Path, body: str = "") -> Path:
    path = tmp_path / "openai-weekly.toml"
    path.write_text(f'[run]\nid = "openai"\nresults_dir = "{tmp_path}"\n{body}')
    return path


def _started_by(monkeypatch: pytest.MonkeyPatch, schedule: RunSchedule | None) -> None:
    monkeypatch.setattr(run_origin, "run_schedule", lambda: schedule)


def test_a_scheduled_run_gets_a_new_run_id_whatever_its_config_and_parameters_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, RunSchedule(deployment="weekly", auto_scheduled=True))
    request = RunRequest(
        config=str(_config(tmp_path)), run_id="pinned", overrides={"run.id": "also-pinned"}
    )
    fixed = flow_module._in_series(request)
    assert fixed.run_id is not None and fixed.run_id.startswith("run-")
    assert fixed.series == "weekly"
    assert fixed.schedule is not None and fixed.schedule.auto_scheduled


def test_a_deployment_run_by_hand_keeps_only_a_run_id_its_parameters_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, RunSchedule(deployment="weekly"))
    config = str(_config(tmp_path))
    fresh = flow_module._in_series(RunRequest(config=config))
    assert fresh.run_id is not None and fresh.run_id.startswith("run-")  # not the config's
    named = flow_module._in_series(RunRequest(config=config, run_id="smoke"))
    assert (named.run_id, named.series) == ("smoke", "weekly")


def test_a_run_by_hand_is_in_its_config_s_series_unless_run_series_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, None)
    plain = flow_module._in_series(RunRequest(config=str(_config(tmp_path))))
    assert (plain.run_id, plain.series) == ("openai", "openai-weekly")
    named = flow_module._in_series(
        RunRequest(config=str(_config(tmp_path, 'series = "nightly"\n')))
    )
    assert named.series == "nightly"


def test_a_rerun_stays_in_the_series_its_run_id_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, None)
    (tmp_path / "openai").mkdir()
    (tmp_path / "openai" / "config.json").write_text(
        json.dumps({"request": {"series": "weekly"}, "settings": {}})
    )
    rerun = flow_module._in_series(RunRequest(config=str(_config(tmp_path))))
    assert rerun.series == "weekly"


def test_a_shard_keeps_the_run_id_and_series_of_its_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, RunSchedule(deployment="shard"))  # the child's own deployment
    parent = RunSchedule(deployment="weekly", auto_scheduled=True)
    request = RunRequest(
        config=str(_config(tmp_path)), run_id="run-1", series="weekly", schedule=parent
    )
    shard = flow_module._in_series(request)
    assert (shard.run_id, shard.series, shard.schedule) == ("run-1", "weekly", parent)


def test_a_run_folder_from_before_series_is_in_its_config_s_series() -> None:
    assert manifest_series({"request": {"config": "configs/weekly.toml"}}) == "weekly"
    assert manifest_series({"series": "nightly", "request": {"config": "x.toml"}}) == "nightly"
    assert manifest_series({}) is None


def test_the_config_digest_leaves_out_where_a_run_goes_and_what_it_costs(tmp_path: Path) -> None:
    config = _config(tmp_path)
    here = load_settings(config)
    elsewhere = load_settings(
        config,
        **{
            "run.results_dir": "/elsewhere",
            "limits.ingest": 2,
            "memory.build_store": str(tmp_path / "builds"),
        },
    )
    other_reader = load_settings(config, **{"qa.top_ke": 3})
    assert config_digest(here) == config_digest(elsewhere)
    assert config_digest(here) != config_digest(other_reader)
    assert series_name(here, "configs/my weekly.toml") == "my-weekly"


def test_a_run_keeping_its_configs_run_id_reads_its_settings_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, None)
    reads: list[str | None] = []
    read = RunRequest.settings

    def counted(self: RunRequest) -> object:
        reads.append(self.run_id)
        return read(self)

    monkeypatch.setattr(RunRequest, "settings", counted)
    fixed, known = flow_module._fixed_in_series(RunRequest(config=str(_config(tmp_path))))
    settings, plan = flow_module._checked_plan(fixed, record=False, settings=known)
    assert reads == [None]  # read once, to fix the run id; the plan is made from those
    assert settings.run.id == plan.run_id == "openai"


def test_a_run_given_a_new_run_id_reads_its_settings_again_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started_by(monkeypatch, RunSchedule(deployment="weekly", auto_scheduled=True))
    fixed, known = flow_module._fixed_in_series(RunRequest(config=str(_config(tmp_path))))
    assert known is None  # they hold the config's run id, not the new one
    settings, _ = flow_module._checked_plan(fixed, record=False, settings=known)
    assert settings.run.id == fixed.run_id != "openai"
