"""Which series a run belongs to, and when and how it was started: the runs of one weekly
schedule (or of one config run again and again) are one series, compared with each other.

A run's series is, in order: the one its run id recorded first (a rerun stays in its series),
the one its request names, the deployment's name for a deployment run, `[run] series` where
set, else the stem of its config file (configs/weekly.toml: "weekly"). A run folder written
before series existed has none recorded: its series is its config's stem (`manifest_series`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lme_bench.config.settings import Settings

SERIES_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
# Settings that change no result (where results go, how much runs at once, prices, when a
# run counts as regressed) are left out of the config digest, so two runs of one config in
# other folders share it.
_UNDIGESTED = ("run", "limits", "cache", "prices", "regression")


class RunSchedule(BaseModel):
    """How a run was started: by a deployment (and its schedule) or by hand."""

    model_config = ConfigDict(extra="forbid")

    deployment: str | None = Field(default=None, description="the deployment's name")
    flow_run_id: str | None = None
    scheduled_start: str | None = Field(default=None, description="ISO 8601, UTC")
    auto_scheduled: bool = Field(
        default=False, description="started by the deployment's schedule, not by hand"
    )


def config_stem(config: str | Path | None) -> str:
    """A series name from a config path: its stem, made a valid name."""
    stem = Path(str(config or "default")).stem or "default"
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")
    return name[:100] or "default"


def series_name(
    settings: Settings,
    config: str | Path | None,
    schedule: RunSchedule | None = None,
    given: str | None = None,
) -> str:
    """The run's series: `given` (the one its run id recorded, else the one asked for), then
    as the module's docstring says."""
    if given:
        return given
    if schedule is not None and schedule.deployment:
        return schedule.deployment
    return settings.run.series or config_stem(config)


def recorded_series(run_dir: Path) -> str | None:
    """The series a run id recorded when it first ran (config.json's request), if any."""
    path = run_dir / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (ValueError, UnicodeDecodeError):
        return None  # the rerun check reports a bad config.json by itself
    request = data.get("request") if isinstance(data, dict) else None
    series = request.get("series") if isinstance(request, dict) else None
    return series if isinstance(series, str) and series else None


def manifest_series(manifest: dict[str, Any]) -> str | None:
    """The series a manifest names; for a manifest from before series, its config's stem."""
    series = manifest.get("series")
    if isinstance(series, str) and series:
        return series
    request = manifest.get("request")
    config = request.get("config") if isinstance(request, dict) else None
    return config_stem(config) if isinstance(config, str) and config else None


def config_digest(settings: Settings) -> str:
    """sha256 of the settings that decide a run's results (where it runs and what it costs
    left out), as canonical JSON."""
    data = {k: v for k, v in settings.redacted().items() if k not in _UNDIGESTED}
    data["run"] = {"stages": settings.stages}
    if isinstance(data.get("memory"), dict):  # where builds travel decides no result
        data["memory"] = {k: v for k, v in data["memory"].items() if k != "build_store"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
