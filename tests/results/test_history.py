"""A series' history read from run folders of every version: folders from before series, code
versions, the benchmark key or config.json, and summaries lacking a section, are listed with
what they hold and blanks for the rest; the settings diff leaves out keys that change no result;
a missing or empty results folder and an unknown series are one error naming them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lme_bench.report.history import artifact_key, history_markdown
from lme_bench.results.history import HistoryError, series_history, series_overview

QA = {
    "judges": {
        "openai:gpt-4o": {
            "kind": "llm",
            "per_type": {"multi-session": {"accuracy": 0.5, "n": 2, "ci95": [0.0, 1.0]}},
            "overall": {"accuracy": 0.5, "correct": 1, "n": 2, "ci95": [0.0, 1.0]},
            "task_averaged": {"accuracy": 0.5, "correct": 1, "n": 2, "ci95": [0.0, 1.0]},
        }
    }
}


def _old_run(
    results: Path, run_id: str, started: str, config: dict[str, Any], **summary: Any
) -> None:
    """A run folder as lme-bench wrote it before series, code_version, the benchmark key and
    config.json: its settings in the manifest, its version a git sha."""
    folder = results / run_id
    folder.mkdir(parents=True)
    manifest = {
        "manifest_version": 1,
        "run_id": run_id,
        "request": {"config": "configs/weekly.toml"},
        "started_at": started,
        "finished_at": started,
        "dataset": {"path": "data/s.json", "sha256": "aa" * 32},
        "failed_question_ids": ["q9"] if run_id == "old2" else [],
        "stages": ["ingest", "retrieval", "answer", "judge", "report"],
        "models": {"judge": "openai:gpt-4o"},
        "git": {"sha": "0123456789abcdef", "dirty": run_id == "old2"},
        "config": config,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "summary.json").write_text(json.dumps(summary))


def test_folders_of_earlier_versions_list_with_what_they_hold(tmp_path: Path) -> None:
    settings = {"qa": {"top_ke": 10}, "limits": {"answer": 4}, "run": {"id": "old1"}}
    _old_run(tmp_path, "old1", "2026-11-02T03:00:00+00:00", settings, qa=QA)  # no retrieval
    changed = {"qa": {"top_ke": 3}, "limits": {"answer": 16}, "run": {"id": "old2"}}
    session = {"overall": {"n": 2, "recall_all@5": 0.5, "ndcg_any@10": 0.25}, "by_type": {}}
    _old_run(tmp_path, "old2", "2026-11-09T03:00:00+00:00", changed, session=session)  # no qa

    history = series_history(tmp_path)  # the folder's only series: the config's stem
    assert history.series == "weekly"
    newest, oldest = history.rows
    assert (newest.run.run_id, oldest.run.run_id) == ("old2", "old1")
    assert newest.code_version == "0123456-dirty" and oldest.code_version == "0123456"
    assert newest.changes == ["qa.top_ke: 10 -> 3"]  # limits and the run id change no result
    assert oldest.changes == []
    assert set(oldest.figures) == {"qa_overall", "qa_task_averaged"}
    assert set(newest.figures) == {"recall_all@5", "ndcg@10"}
    assert newest.figures["recall_all@5"].ci95 is None  # no retrieval.parquet to resample
    assert newest.failed == 1 and newest.empty_memories is None and newest.cost is None

    text = history_markdown(history)
    lines = [line for line in text.splitlines() if line.startswith("| old")]
    assert lines[0].startswith("| old2 | 2026-11-09 03:00 | 0123456-dirty | qa.top_ke: 10 -> 3 |")
    assert lines[0].endswith("| - | - | 0.500 | 0.250 | - | 1 | - |")  # no QA: blank
    assert lines[1].endswith("| 50.0% [0.0%, 100.0%] | 50.0% [0.0%, 100.0%] | - | - | - | 0 | - |")


def test_a_summary_that_is_not_json_leaves_the_run_listed_with_blanks(tmp_path: Path) -> None:
    _old_run(tmp_path, "old1", "2026-11-02T03:00:00+00:00", {})
    (tmp_path / "old1" / "summary.json").write_text("{not json")
    (row,) = series_history(tmp_path, "weekly").rows
    assert row.figures == {} and row.failed == 0


def test_several_series_are_listed_with_their_runs_and_latest(tmp_path: Path) -> None:
    _old_run(tmp_path, "old1", "2026-11-02T03:00:00+00:00", {})
    _old_run(tmp_path, "old2", "2026-11-09T03:00:00+00:00", {})
    other = tmp_path / "nightly-1"
    other.mkdir()
    (other / "manifest.json").write_text(
        json.dumps({"run_id": "nightly-1", "series": "Nightly.Main", "started_at": "2026-11-10"})
    )
    found = series_overview(tmp_path)
    assert [(s.series, s.runs, s.latest.run_id) for s in found] == [
        ("Nightly.Main", 1, "nightly-1"),
        ("weekly", 2, "old2"),
    ]
    with pytest.raises(HistoryError, match="several series"):
        series_history(tmp_path)
    assert artifact_key("Nightly.Main") == "history-nightly-main"


def test_no_history_is_one_error_naming_the_folder_or_series(tmp_path: Path) -> None:
    missing = re.escape(f"{tmp_path / 'nowhere'}: no such results folder")
    with pytest.raises(HistoryError, match=missing):
        series_history(tmp_path / "nowhere")
    (tmp_path / "checkpoints").mkdir()  # a folder, but no run
    with pytest.raises(HistoryError, match=re.escape(f"{tmp_path}: holds no runs")):
        series_history(tmp_path)
    _old_run(tmp_path, "old1", "2026-11-02T03:00:00+00:00", {})
    with pytest.raises(HistoryError, match=r"no runs of series 'monthly' .*weekly"):
        series_history(tmp_path, "monthly")


def test_locomo_f1_and_the_beam_rubric_score_are_headline_figures(tmp_path: Path) -> None:
    locomo = {
        "questions": 4,
        "overall_f1": 0.5,
        "categories": {"single-hop": {"f1": 0.25}, "multi-hop": {"f1": 0.75}},
        "question_scores": "locomo_scores.json",
    }
    _old_run(tmp_path, "old1", "2026-11-02T03:00:00+00:00", {}, locomo=locomo)
    scores = [{"question_id": f"q{i}", "f1": f1} for i, f1 in enumerate((0.0, 0.5, 0.5, 1.0))]
    (tmp_path / "old1" / "locomo_scores.json").write_text(json.dumps({"questions": scores}))
    beam = {
        "judge": "openai:gpt-4o",
        "judges": {
            "openai:gpt-4o": {
                "judged": 6,
                "mean_over_abilities": 0.625,
                "abilities": {"abstention": {"score": 0.5}, "summarization": {"score": 0.75}},
            }
        },
    }
    _old_run(tmp_path, "old2", "2026-11-09T03:00:00+00:00", {}, beam=beam)
    newest, oldest = series_history(tmp_path).rows
    f1 = oldest.figures["locomo_f1"]
    assert (f1.value, f1.n, f1.per_type) == (0.5, 4, {"single-hop": 0.25, "multi-hop": 0.75})
    assert f1.ci95 is not None and f1.ci95[0] < 0.5 < f1.ci95[1]  # resampled questions
    rubric = newest.figures["beam"]
    assert (rubric.value, rubric.ci95, rubric.n) == (0.625, None, 6)
    assert rubric.per_type == {"abstention": 0.5, "summarization": 0.75}
    text = history_markdown(series_history(tmp_path))
    assert "| LoCoMo F1 (official) | BEAM rubric score (mean over abilities) |" in text
    assert "| - | 0.625 |" in text and f"| 0.500 [{f1.ci95[0]:.3f}, {f1.ci95[1]:.3f}] | - |" in text
