"""The runs of a series in a results folder, read from each run folder's manifest.json and
summary.json: what `lme-bench history` lists and where "the previous run" is looked up.

A run folder is one with a manifest.json (written last, so a run that is still going or was
killed has none and is not listed). Folders of any version are read: a manifest from before
series is in its config's stem (series.manifest_series), a missing figure is None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import DEFAULT_BENCHMARK
from lme_bench.results.series import manifest_series


@dataclass(frozen=True)
class SeriesRun:
    """One finished run of a series, as its folder tells it."""

    run_id: str
    run_dir: Path
    series: str
    started_at: str | None  # ISO 8601 (manifest), the order of a series
    finished_at: str | None
    benchmark: str | None
    dataset_sha256: str | None
    dataset_path: str | None
    judge: str | None  # [models] judge; None: not judged
    failed: tuple[str, ...]  # question ids that failed
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)
    summary: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def completed(self) -> bool:
        """Finished with no failed question: fit to be a baseline."""
        return self.finished_at is not None and not self.failed

    def same_ground(self, other: SeriesRun) -> bool:
        """Same benchmark and dataset file: the runs' questions are the same questions."""
        return (self.benchmark, self.dataset_sha256) == (other.benchmark, other.dataset_sha256)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _table(manifest: dict[str, Any], key: str) -> dict[str, Any]:
    value = manifest.get(key)
    return value if isinstance(value, dict) else {}


def read_series_run(run_dir: Path) -> SeriesRun | None:
    """The run in `run_dir`; None when it holds no readable manifest."""
    manifest = _json(run_dir / "manifest.json")
    if not manifest:
        return None
    dataset = _table(manifest, "dataset")
    models = _table(manifest, "models")
    stages = manifest.get("stages") or []
    benchmark = manifest.get("benchmark")
    return SeriesRun(
        run_id=str(manifest.get("run_id") or run_dir.name),
        run_dir=run_dir,
        series=manifest_series(manifest) or run_dir.name,
        started_at=manifest.get("started_at"),
        finished_at=manifest.get("finished_at"),
        benchmark=benchmark if isinstance(benchmark, str) else DEFAULT_BENCHMARK,  # before: LME
        dataset_sha256=dataset.get("sha256"),
        dataset_path=dataset.get("path"),
        judge=models.get("judge") if "judge" in stages else None,
        failed=tuple(manifest.get("failed_question_ids") or ()),
        manifest=manifest,
        summary=_json(run_dir / "summary.json"),
    )


def series_runs(results_dir: Path, series: str | None = None) -> list[SeriesRun]:
    """Every run in `results_dir` (of `series` only, when named), newest first."""
    if not results_dir.is_dir():
        return []
    runs = []
    for child in results_dir.iterdir():
        if child.is_dir() and not child.name.startswith("."):
            run = read_series_run(child)
            if run is not None and (series is None or run.series == series):
                runs.append(run)
    return sorted(runs, key=lambda r: (r.started_at or "", r.run_id), reverse=True)


def previous_run(results_dir: Path, run: SeriesRun) -> SeriesRun | None:
    """The latest completed run of `run`'s series on the same benchmark and dataset file,
    started before it: the run it is compared with by default."""
    return latest_before(
        results_dir, run.series, (run.benchmark, run.dataset_sha256), run.run_id, run.started_at
    )


def latest_before(
    results_dir: Path,
    series: str,
    ground: tuple[str | None, str | None],
    run_id: str,
    started_at: str | None,
) -> SeriesRun | None:
    """The latest completed run of `series` on `ground` (benchmark, dataset sha256) other than
    `run_id`, started before `started_at` (any time when None): "the previous run" of a run
    whose own folder is still being written (it has no manifest yet, or one from before)."""
    for earlier in series_runs(results_dir, series):
        if earlier.run_id == run_id:
            continue
        if started_at is not None and (earlier.started_at or "") >= started_at:
            continue
        if earlier.completed and (earlier.benchmark, earlier.dataset_sha256) == ground:
            return earlier
    return None
