"""A run's "previous" baseline: the latest completed run of its series started before it, and
for a rerun of a run id the baseline it was first compared with while that run is there."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.run.baseline import choose_baseline, previous_baseline
from tests.factories import run_summary_json
from tests.results.test_series_runs import _run

GROUND = ("longmemeval", "aa")
NOW = "2026-12-14T03:00:00+00:00"


def test_a_rerun_keeps_the_baseline_it_was_first_compared_with(tmp_path: Path) -> None:
    _run(tmp_path, "w1", "2026-11-16T03:00:00+00:00")
    _run(tmp_path, "w2", "2026-11-23T03:00:00+00:00")
    _run(tmp_path, "w4", "2026-12-07T03:00:00+00:00")
    rerun = tmp_path / "w3"
    rerun.mkdir()
    recorded = {"compare_to": "previous", "series": "weekly", "run_id": "w2"}
    baseline = recorded | {"status": "no_regression", "message": "no figure dropped"}
    (rerun / "summary.json").write_text(json.dumps(run_summary_json(baseline=baseline)))
    assert previous_baseline(rerun, "weekly", GROUND, NOW) == "w2"  # not w4, started since
    (tmp_path / "w2" / "manifest.json").unlink()  # the baseline gone: the latest one then
    assert previous_baseline(rerun, "weekly", GROUND, NOW) == "w4"
    fresh = tmp_path / "w5"
    fresh.mkdir()
    assert previous_baseline(fresh, "weekly", GROUND, NOW) == "w4"


def test_a_literal_run_id_is_the_baseline_as_given(tmp_path: Path) -> None:
    chosen = choose_baseline(tmp_path / "w3", "w1", "weekly", GROUND, NOW)
    assert (chosen.compare_to, chosen.run_id) == ("w1", "w1")
    first = choose_baseline(tmp_path / "w3", "previous", "weekly", GROUND, NOW)
    assert first.run_id is None  # a series' first run: no baseline yet
