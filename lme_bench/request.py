"""What a user asks for when starting a run: the flow's parameters and the CLI's arguments."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from lme_bench.config import Settings, load_settings


class RunRequest(BaseModel):
    """Parameters of one benchmark run; unset values come from the config file."""

    model_config = ConfigDict(extra="forbid")

    config: str = Field(default="configs/default.toml", description="TOML run config")
    dataset: str | None = Field(default=None, description="LongMemEval JSON file")
    run_id: str | None = Field(default=None, description="reuse an id to continue a run")
    results_dir: str | None = Field(default=None, description="folder of run folders")
    questions: list[str] | None = Field(default=None, description="only these question ids")
    limit: int | None = Field(default=None, ge=1, description="only the first N questions")

    def settings(self) -> Settings:
        return load_settings(
            Path(self.config),
            **{
                "dataset.path": self.dataset,
                "run.id": self.run_id,
                "run.results_dir": self.results_dir,
            },
        )
