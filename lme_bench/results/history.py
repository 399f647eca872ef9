"""A series' history as data: its runs newest first, each with its date, code version, what
changed in its settings since the run before, its headline figures (history_figures.py), cost,
failed questions and empty memories; and, for a results folder of several series, each series
with its run count and latest run. What `lme-bench history`, history.html and the flow's
`history-<series>` artifact show (lme_bench.report.history renders it).

The settings compared are config.json's `settings` (the manifest's `config` for runs from
before config.json), flattened to dotted keys as reruns compare them
(lme_bench.results.recorded_settings), the keys that change no result left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lme_bench.config.settings import replay_settings
from lme_bench.config.transport import is_transport
from lme_bench.results.history_figures import Figure, headline_figures
from lme_bench.results.recorded_settings import FREE_KEYS, comparable, flatten, recorded_run
from lme_bench.results.run_folder import RerunError
from lme_bench.results.series_runs import SeriesRun, series_runs

REPORT_NAME = "report.html"
# besides FREE_KEYS: a run's own id changes no result
UNCOMPARED = (*FREE_KEYS, "run.id")


class HistoryError(ValueError):
    """No history to show: the results folder is missing or empty, or the series unknown."""


@dataclass(frozen=True)
class HistoryRow:
    run: SeriesRun
    code_version: str | None
    changes: list[str]  # "qa.top_ke: 10 -> 3", since the run before (none for the first)
    ground: list[str]  # what breaks the trend since the run before: benchmark, dataset file
    judge_change: str | None  # "judge a -> b" since the run before
    figures: dict[str, Figure]
    cost: float | None  # US dollars; None: no prices
    failed: int
    empty_memories: int | None  # None: not recorded (older runs)

    @property
    def report(self) -> Path | None:
        path = self.run.run_dir / REPORT_NAME
        return path if path.is_file() else None


@dataclass(frozen=True)
class History:
    results_dir: Path
    series: str
    rows: list[HistoryRow]  # newest first


@dataclass(frozen=True)
class SeriesOverview:
    series: str
    runs: int
    latest: SeriesRun


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def code_version(manifest: dict[str, Any]) -> str | None:
    """The manifest's code version, else (older runs) its git sha, short, marked when dirty."""
    version = manifest.get("code_version")
    if isinstance(version, str) and version:
        return version
    git = _dict(manifest.get("git"))
    sha = git.get("sha")
    if not isinstance(sha, str) or not sha:
        return None
    return sha[:7] + ("-dirty" if git.get("dirty") else "")


@cache
def _defaults() -> dict[str, Any]:
    return flatten(comparable(replay_settings({}, "defaults").redacted()))


def _settings(run: SeriesRun) -> dict[str, Any] | None:
    try:
        recorded = recorded_run(run.run_dir)
    except RerunError:  # a config.json that does not read: nothing to compare
        return None
    return flatten(comparable(recorded["settings"])) if recorded else None


def _shown(value: Any) -> str:
    if value is None:
        return "(unset)"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _compared(key: str) -> bool:
    under = any(key == p or key.startswith(p + ".") for p in UNCOMPARED)
    return not under and not is_transport(key)


def settings_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """`key: old -> new` for each dotted settings key that differs (a key one run lacks counts
    as its default), the keys that change no result left out."""
    if before is None or after is None:
        return []
    defaults, missing = _defaults(), object()
    changed = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key, defaults.get(key, missing)), after.get(key, defaults.get(key))
        if _compared(key) and old != new:
            changed.append(f"{key}: {_shown(None if old is missing else old)} -> {_shown(new)}")
    return changed


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "unknown"


def ground_changes(before: SeriesRun, after: SeriesRun) -> list[str]:
    """Why two runs' figures are not one line: another benchmark or another dataset file."""
    reasons = []
    if before.benchmark != after.benchmark:
        reasons.append(f"benchmark {before.benchmark} -> {after.benchmark}")
    if before.dataset_sha256 != after.dataset_sha256:
        reasons.append(
            f"dataset file sha256 {_short(before.dataset_sha256)} -> {_short(after.dataset_sha256)}"
        )
    return reasons


def _judge_change(before: SeriesRun, after: SeriesRun) -> str | None:
    if before.judge and after.judge and before.judge != after.judge:
        return f"judge {before.judge} -> {after.judge}"
    return None


def _failed(run: SeriesRun) -> int:
    incomplete = _dict(run.summary.get("incomplete"))
    return max(len(run.failed), int(incomplete.get("failed") or 0))


def _empty_memories(run: SeriesRun) -> int | None:
    empty = _dict(run.manifest.get("ingestion")).get("empty_memories")
    if isinstance(empty, list):
        return len(empty)
    health = _dict(run.summary.get("memory_health"))
    return int(health["empty"]) if isinstance(health.get("empty"), int) else None


def _cost(run: SeriesRun) -> float | None:
    total = _dict(run.summary.get("cost")).get("total")
    return float(total) if isinstance(total, int | float) else None


def _rows(runs: list[SeriesRun]) -> list[HistoryRow]:
    settings = [_settings(run) for run in runs]
    rows = []
    for i, run in enumerate(runs):
        earlier = runs[i + 1] if i + 1 < len(runs) else None
        rows.append(
            HistoryRow(
                run=run,
                code_version=code_version(run.manifest),
                changes=settings_changes(settings[i + 1], settings[i]) if earlier else [],
                ground=ground_changes(earlier, run) if earlier else [],
                judge_change=_judge_change(earlier, run) if earlier else None,
                figures=headline_figures(run.summary, run.run_dir),
                cost=_cost(run),
                failed=_failed(run),
                empty_memories=_empty_memories(run),
            )
        )
    return rows


def _all_runs(results_dir: Path) -> list[SeriesRun]:
    if not results_dir.is_dir():
        raise HistoryError(f"{results_dir}: no such results folder")
    runs = series_runs(results_dir)
    if not runs:
        raise HistoryError(f"{results_dir}: holds no runs (no run folder with a manifest.json)")
    return runs


def series_overview(results_dir: Path) -> list[SeriesOverview]:
    """Each series of the results folder with its run count and latest run, by name."""
    by_series: dict[str, list[SeriesRun]] = {}
    for run in _all_runs(results_dir):
        by_series.setdefault(run.series, []).append(run)
    return [SeriesOverview(s, len(r), r[0]) for s, r in sorted(by_series.items())]


def series_history(results_dir: Path, series: str | None = None) -> History:
    """The runs of `series` (None: the folder's only series), newest first; HistoryError when
    the folder is missing or empty, the series unknown, or None names none of several."""
    found = series_overview(results_dir)
    names = [s.series for s in found]
    if series is None:
        if len(names) > 1:
            raise HistoryError(f"{results_dir}: holds several series ({', '.join(names)})")
        series = names[0]
    if series not in names:
        raise HistoryError(
            f"{results_dir}: no runs of series {series!r} (its series: {', '.join(names)})"
        )
    return History(results_dir, series, _rows(series_runs(results_dir, series)))
