"""What a user asks for when starting a run: the flow's parameters and the CLI's arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lme_bench.config.run_section import Stage
from lme_bench.config.settings import Settings, load_settings, replay_settings
from lme_bench.config.storage_urls import is_url
from lme_bench.results.series import SERIES_PATTERN, RunSchedule


class RunRequest(BaseModel):
    """Parameters of one benchmark run; unset values come from the config file."""

    model_config = ConfigDict(extra="forbid")

    config: str = Field(default="configs/default.toml", description="TOML run config")
    dataset: str | None = Field(
        default=None, description="a benchmark file (LongMemEval, LoCoMo, BEAM …)"
    )
    run_id: str | None = Field(
        default=None, description="reuse a run id to continue or rerun it; default: a new one"
    )
    results_dir: str | None = Field(default=None, description="folder of run folders")
    questions: list[str] | None = Field(default=None, description="only these question ids")
    limit: int | None = Field(default=None, ge=1, description="only the first N questions")
    stages: list[Stage] | None = Field(
        default=None, description="ingest, retrieval, answer, judge, report; default: config"
    )
    overrides: dict[str, Any] = Field(
        default_factory=dict,
        description='dotted config keys, e.g. {"qa.strategy": "two-pass", "limits.ingest": 4}',
    )
    failed_only: bool = Field(
        default=False, description="rerun only the questions that failed in this run id"
    )
    shards: int = Field(
        default=1, ge=1, le=64, description="split the questions into this many child flow runs"
    )
    shard_deployment: str | None = Field(
        default=None, description="deployment that runs each shard, e.g. benchmark/shard"
    )
    shard_queues: list[str] | None = Field(
        default=None,
        description="work queues of the shard deployment's pool the shards go to in turn (shard"
        " i to queue i mod n), so each runs where its queue's workers are; default: the"
        " deployment's own queue",
    )
    compare_to: str | None = Field(
        default=None,
        description='a run id to compare with, or "previous": the latest completed run of the'
        " series on the same benchmark and dataset file (a compare artifact and chart; a"
        " regression by [regression] fails the run)",
    )
    label: str | None = Field(default=None, description="added to the flow run's name")
    series: str | None = Field(
        default=None,
        pattern=SERIES_PATTERN,
        description="the series of runs this one belongs to; default: the deployment's name, "
        "[run] series, else the config's stem",
    )
    schedule: RunSchedule | None = Field(
        default=None, description="set by the flow: the deployment and schedule that started it"
    )
    shard: bool = Field(
        default=False,
        description="set by a scale-out run on its child runs: their work stays in the task "
        "cache and the build store, and only the scale-out run writes the run to a results URL",
    )
    replay: bool = Field(
        default=False,
        description="run with the settings this run id recorded (its config.json), not the "
        "config file and environment of today; stages and overrides still apply",
    )

    def settings(self) -> Settings:
        explicit: dict[str, Any] = dict(self.overrides)
        explicit |= {
            "dataset.path": self.dataset,
            "run.id": self.run_id,
            "run.results_dir": self.results_dir,
            "run.stages": self.stages,
        }
        if self.replay:
            return self._recorded_settings(explicit)
        return load_settings(Path(self.config), **explicit)

    def _recorded_settings(self, explicit: dict[str, Any]) -> Settings:
        from lme_bench.results.recorded_settings import CONFIG_FILE, recorded_run
        from lme_bench.results.run_folder import RerunError

        if self.run_id is None:
            raise RerunError("replay needs the run id whose settings to replay")
        # The run's folder: under the results folder asked for, else the config's. With
        # results at a URL, in this machine's working folder, its settings fetched from the
        # URL where it has none (a shard on a worker sharing no disk with the run's parent).
        if self.results_dir and not is_url(self.results_dir):
            run_dir = Path(self.results_dir) / self.run_id
        else:
            here = load_settings(Path(self.config), **{"run.results_dir": self.results_dir}).run
            run_dir = here.results_dir / self.run_id
            if here.results_url:
                from lme_bench.results.run_mirror import pull_recorded

                pull_recorded(here.results_url, run_dir)
                explicit |= {"run.results_dir": here.results_url, "run.work_dir": here.results_dir}
        recorded = recorded_run(run_dir)
        if recorded is None:
            raise RerunError(f"{run_dir}: no run here (no {CONFIG_FILE}); check the run id")
        return replay_settings(recorded["settings"], str(run_dir / CONFIG_FILE), **explicit)
