"""A run against its baseline (`compare_to`): a run id, or "previous", the latest completed
run of the same series on the same benchmark and dataset file (lme_bench.results.series_runs).
The comparison's files go to the run's `compare/` folder, the watched figures are judged by the
regression gate ([regression], lme_bench.compare.gate), and the outcome becomes the summary's
`baseline` record, which summary.md, report.html, the flow's last line and its state show.

A rerun of a run id keeps the baseline it was first compared with, while that run is there: a
later run of the series never becomes the "previous" run of an earlier one. A comparison that
cannot be made is said so in the record; it does not fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.compare.gate import check_regression
from lme_bench.config.settings import Settings
from lme_bench.report.compare import CompareError, compare_runs
from lme_bench.report.regression import figure_record, regression_message
from lme_bench.results.run_summary import RunSummary, read_summary
from lme_bench.results.series_runs import latest_before, read_series_run

PREVIOUS = "previous"
REGRESSED = "regressed"


def _recorded(run_dir: Path) -> str | None:
    """The baseline this run id was compared with before, from its summary.json (none for a
    first run or a stopped one); SummaryError naming the file and field for a bad one."""
    path = run_dir / "summary.json"
    if not path.is_file():
        return None
    summary = read_summary(path)
    record = summary.baseline if isinstance(summary, RunSummary) else None
    return record.run_id if record is not None and record.run_id else None


def previous_baseline(
    run_dir: Path, series: str, ground: tuple[str | None, str | None], started_at: str
) -> str | None:
    """The previous run of the run in `run_dir`: the one it recorded, else the latest completed
    run of `series` on `ground` (benchmark, dataset sha256) started before it."""
    kept = _recorded(run_dir)
    if kept is not None:
        earlier = read_series_run(run_dir.parent / kept)
        if earlier is not None and earlier.completed and earlier.series == series:
            return kept
    found = latest_before(run_dir.parent, series, ground, run_dir.name, started_at)
    return found.run_id if found is not None else None


@dataclass(frozen=True, slots=True)
class Baseline:
    compare_to: str  # "previous" or a run id, as asked for
    series: str
    run_id: str | None  # None: "previous" found no earlier run


def choose_baseline(
    run_dir: Path,
    compare_to: str,
    series: str,
    ground: tuple[str | None, str | None],
    started_at: str,
) -> Baseline:
    """The run the run in `run_dir` is compared with; before its summary.json is rewritten."""
    if compare_to != PREVIOUS:
        return Baseline(compare_to, series, compare_to)
    return Baseline(compare_to, series, previous_baseline(run_dir, series, ground, started_at))


def against_baseline(run_dir: Path, settings: Settings, baseline: Baseline) -> dict[str, Any]:
    """Compare the run in `run_dir` (its tables and summary.json written) with `baseline`;
    the summary's `baseline` record."""
    record: dict[str, Any] = {
        "compare_to": baseline.compare_to,
        "series": baseline.series,
        "run_id": baseline.run_id,
    }
    if baseline.run_id is None:
        message = (
            f"no baseline yet: no earlier completed run of series {baseline.series} on this"
            " benchmark and dataset file"
        )
        return record | {"status": "no_baseline", "message": message}
    try:
        output = compare_runs(
            baseline.run_id, run_dir.name, results_dir=run_dir.parent, out=run_dir / "compare"
        )
    except CompareError as exc:
        message = f"not compared with {baseline.run_id}: {exc}"
        return record | {"status": "not_compared", "message": message}
    gate = settings.regression
    verdict = check_regression(output.comparison, gate.watch, gate.min_drop)
    return record | {
        "status": REGRESSED if verdict.regressed else "no_regression",
        "message": regression_message(verdict),
        "min_drop": gate.min_drop,
        "figures": [figure_record(c) for c in verdict.changes],
        "not_measured": verdict.not_measured,
        "files": [str(p) for p in output.paths],
    }
