"""The runs of a series, read from their folders: newest first, old folders included, and the
previous run a new one is compared with (completed, same benchmark and dataset file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lme_bench.results.series_runs import previous_run, read_series_run, series_runs


def _run(results: Path, run_id: str, started: str, **fields: Any) -> None:
    folder = results / run_id
    folder.mkdir(parents=True)
    manifest = {
        "run_id": run_id,
        "series": "weekly",
        "benchmark": "longmemeval",
        "started_at": started,
        "finished_at": started,
        "dataset": {"sha256": "aa", "path": "data/s.json"},
        "failed_question_ids": [],
        "stages": ["ingest", "judge"],
        "models": {"judge": "openai:gpt-4o"},
    } | fields
    (folder / "manifest.json").write_text(json.dumps({k: v for k, v in manifest.items() if v}))


def test_a_series_lists_its_runs_newest_first_with_folders_from_before_series(
    tmp_path: Path,
) -> None:
    _run(tmp_path, "w1", "2026-11-16T03:00:00+00:00")
    _run(tmp_path, "w2", "2026-11-23T03:00:00+00:00")
    _run(tmp_path, "old", "2026-11-09T03:00:00+00:00", series=None,
         benchmark=None, request={"config": "configs/weekly.toml"})  # fmt: skip
    _run(tmp_path, "other", "2026-11-30T03:00:00+00:00", series="nightly")
    (tmp_path / "running").mkdir()  # no manifest yet: not a run to list
    runs = series_runs(tmp_path, "weekly")
    assert [r.run_id for r in runs] == ["w2", "w1", "old"]
    assert runs[2].benchmark == "longmemeval" and runs[2].judge == "openai:gpt-4o"
    assert {r.run_id for r in series_runs(tmp_path)} == {"w1", "w2", "old", "other"}
    assert series_runs(tmp_path / "nowhere") == []


def test_the_previous_run_is_the_latest_completed_one_on_the_same_questions(
    tmp_path: Path,
) -> None:
    _run(tmp_path, "w1", "2026-11-09T03:00:00+00:00")
    _run(tmp_path, "w2", "2026-11-16T03:00:00+00:00", failed_question_ids=["q1"])
    _run(tmp_path, "w3", "2026-11-23T03:00:00+00:00", dataset={"sha256": "bb"})
    _run(tmp_path, "w4", "2026-11-30T03:00:00+00:00")
    latest = read_series_run(tmp_path / "w4")
    assert latest is not None
    found = previous_run(tmp_path, latest)  # w3: another file; w2: a question failed
    assert found is not None and found.run_id == "w1"
    first = read_series_run(tmp_path / "w1")
    assert first is not None and previous_run(tmp_path, first) is None


def test_the_previous_run_of_a_run_still_being_written_is_the_latest_before_it(
    tmp_path: Path,
) -> None:
    from lme_bench.results.series_runs import latest_before

    _run(tmp_path, "w1", "2026-11-16T03:00:00+00:00")
    _run(tmp_path, "w2", "2026-11-23T03:00:00+00:00", failed_question_ids=["q1"])
    _run(tmp_path, "w4", "2026-12-07T03:00:00+00:00")  # started after it
    (tmp_path / "w3").mkdir()  # the run being written: no manifest yet
    ground = ("longmemeval", "aa")
    found = latest_before(tmp_path, "weekly", ground, "w3", "2026-11-30T03:00:00+00:00")
    assert found is not None and found.run_id == "w1"  # w2 failed questions
    assert latest_before(tmp_path, "weekly", ("longmemeval", "bb"), "w3", None) is None
    assert latest_before(tmp_path, "nightly", ground, "w3", None) is None
