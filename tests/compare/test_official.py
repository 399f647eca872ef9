"""`lme-bench compare` on LoCoMo and BEAM runs: each benchmark's own official figures, paired
per question (LoCoMo's F1 per category and overall, BEAM's rubric scores per ability and the
mean over abilities as BEAM averages them), and one clear error for runs of different benchmarks
(runs on different dataset files compare, with a note)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.locomo.report import QUESTION_SCORES_NAME, locomo_report
from lme_bench.compare import CompareError, build_comparison
from lme_bench.compare.paired import MetricComparison
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.report.compare import compare_runs
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow, scores_table
from tests.benchmarks.locomo.samples import listed_sample, write_json
from tests.factories import run_summary_json

RESAMPLES = 200
DATASET = "d" * 64
JUDGE = "openai:gpt-4.1-mini"

# LoCoMo: question id -> (category, official F1 in A, in B); None: not scored in that run.
LOCOMO: dict[str, tuple[str, float | None, float | None]] = {
    "conv-1-q0": ("multi-hop", 0.5, 0.75),
    "conv-1-q1": ("multi-hop", 0.25, 0.25),
    "conv-1-q2": ("single-hop", 1.0, 0.4),
    "conv-1-q3": ("single-hop", 0.0, 0.6),
    "conv-1-q4": ("single-hop", 0.3, None),  # only in A: not paired
    "conv-2-q0": ("adversarial", 1.0, 0.0),
    "conv-2-q1": ("temporal", None, 0.9),  # only in B: not paired
    "conv-2-q2": ("temporal", 0.2, 0.8),
}
# BEAM: question id (chat:question) -> (ability, rubric score in A, in B).
BEAM: dict[str, tuple[str, float | None, float | None]] = {
    "100K-1:q0": ("information_extraction", 1.0, 0.5),
    "100K-1:q1": ("information_extraction", 0.5, 0.5),
    "100K-1:q2": ("information_extraction", 0.0, 1.0),
    "100K-2:q0": ("information_extraction", 0.25, 0.75),  # chat 2: one question, same weight
    "100K-1:q3": ("abstention", 1.0, 0.0),
    "100K-2:q1": ("abstention", 0.0, 0.0),
    "100K-2:q2": ("event_ordering", 0.6, math.nan),  # undefined in B: not paired
    "100K-2:q3": ("event_ordering", 0.4, 0.9),
    "100K-1:q4": ("event_ordering", None, 0.7),  # not judged in A
}


def _folder(results: Path, run_id: str, summary: dict[str, Any], sha: str) -> Path:
    folder = results / run_id
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "manifest.json").write_text(json.dumps({"dataset": {"sha256": sha}}))
    return folder


def write_locomo(results: Path, run_id: str, side: int, sha: str = DATASET) -> None:
    folder = _folder(
        results, run_id, run_summary_json("locomo", locomo={"questions": len(LOCOMO)}), sha
    )
    rows = [
        {"question_id": q, "category": c, "f1": v[side], "evidence_recall": None}
        for q, (c, *v) in LOCOMO.items()
        if v[side] is not None
    ]
    (folder / "locomo_scores.json").write_text(json.dumps({"questions": rows}))


def _beam_row(qid: str, ability: str, score: float | None, sha: str = "b" * 64) -> ScoreRow:
    return ScoreRow(
        question_id=qid,
        question_type=ability,
        is_abstention=ability == "abstention",
        judge=JUDGE,
        judge_kind="llm",
        repeat=0,
        prompt_version="beam-official",
        prompt_name="unified_llm_judge_base_prompt",
        prompt_sha256=sha,
        label=None,
        readable=score is not None,
        raw_verdict="{}",
        status="ok" if score is not None else "error",
        attribution="rubric-scored",
        score=score,
    )


def write_beam(results: Path, run_id: str, side: int, sha: str = "b" * 64) -> None:
    folder = _folder(results, run_id, run_summary_json("beam", beam={"judge": JUDGE}), DATASET)
    rows = [_beam_row(q, a, v[side], sha) for q, (a, *v) in BEAM.items()]
    # a later repeat never counts: only the first judgment is the question's score
    rows += [
        ScoreRow(**{**_beam_row(q, a, 0.123, sha).__dict__, "repeat": 1})
        for q, (a, *_) in BEAM.items()
    ]
    pq.write_table(scores_table(run_id, rows), folder / "scores.parquet")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _rows(found: list[MetricComparison]) -> dict[str, MetricComparison]:
    return {m.metric: m for m in found}


def test_locomo_runs_compare_official_f1_paired_per_question(tmp_path: Path) -> None:
    write_locomo(tmp_path, "a", 0)
    write_locomo(tmp_path, "b", 1)
    c = build_comparison("a", "b", results_dir=tmp_path, resamples=RESAMPLES)
    assert c.benchmark == "locomo" and c.official is not None and c.qa is None
    rows = _rows(c.official.rows)
    pairs = [(cat, a, b) for cat, a, b in LOCOMO.values() if a is not None and b is not None]
    assert list(rows) == ["multi-hop", "temporal", "single-hop", "adversarial", "overall"]
    for name, row in rows.items():
        mine = [(a, b) for cat, a, b in pairs if name in (cat, "overall")]
        expected_a, expected_b = _mean([a for a, _ in mine]), _mean([b for _, b in mine])
        assert row.paired.n == len(mine)
        assert row.paired.a == pytest.approx(expected_a)
        assert row.paired.b == pytest.approx(expected_b)
        assert row.paired.delta == pytest.approx(expected_b - expected_a)
    overall = rows["overall"].paired
    assert overall.ci95 is not None and overall.delta is not None
    assert overall.ci95[0] <= overall.delta <= overall.ci95[1]
    markdown = compare_runs("a", "b", results_dir=tmp_path, resamples=RESAMPLES).markdown
    assert "## LoCoMo F1 (official)" in markdown


def test_a_locomo_comparison_labels_the_judge_accuracy_as_not_official(tmp_path: Path) -> None:
    for run_id, side in (("a", 0), ("b", 1)):
        write_locomo(tmp_path, run_id, side)
        rows = [
            ScoreRow(
                **{
                    **_beam_row(q, c, 1.0).__dict__,
                    "label": bool(v[side]),
                    "score": None,
                    "prompt_name": "default",
                }
            )
            for q, (c, *v) in LOCOMO.items()
            if v[side] is not None
        ]
        pq.write_table(scores_table(run_id, rows), tmp_path / run_id / "scores.parquet")
    output = compare_runs("a", "b", results_dir=tmp_path, resamples=RESAMPLES)
    assert output.comparison.qa is not None
    assert "## QA accuracy (LLM judge, not the official LoCoMo metric)" in output.markdown
    saved = json.loads(next(p for p in output.paths if p.suffix == ".json").read_text())
    assert saved["qa_label"] == "LLM judge, not the official LoCoMo metric"
    paired = [q for q, (_, a, b) in LOCOMO.items() if a is not None and b is not None]
    assert saved["official"]["rows"]["overall"]["n"] == len(paired)


def _beam_figure(pairs: list[tuple[str, str, float]]) -> dict[str, float]:
    """BEAM's averaging written out: per ability and chat the mean, per ability the mean over
    chats, then the mean over abilities."""
    cells: dict[tuple[str, str], list[float]] = {}
    for chat, ability, value in pairs:
        cells.setdefault((ability, chat), []).append(value)
    abilities: dict[str, list[float]] = {}
    for (ability, _), values in cells.items():
        abilities.setdefault(ability, []).append(_mean(values))
    figures = {ability: _mean(means) for ability, means in abilities.items()}
    figures["mean over abilities"] = _mean(list(figures.values()))
    return figures


def test_beam_runs_compare_rubric_scores_paired_per_question(tmp_path: Path) -> None:
    write_beam(tmp_path, "a", 0)
    write_beam(tmp_path, "b", 1)
    c = build_comparison("a", "b", results_dir=tmp_path, resamples=RESAMPLES)
    assert c.benchmark == "beam" and c.qa is None and c.official is not None
    assert c.official.judge == JUDGE
    both = [
        (q.partition(":")[0], ability, a, b)
        for q, (ability, a, b) in BEAM.items()
        if a is not None and b is not None and not math.isnan(a) and not math.isnan(b)
    ]
    expected_a = _beam_figure([(chat, ability, a) for chat, ability, a, _ in both])
    expected_b = _beam_figure([(chat, ability, b) for chat, ability, _, b in both])
    rows = _rows(c.official.rows)
    assert set(rows) == set(expected_a)
    for name, row in rows.items():
        assert row.paired.a == pytest.approx(expected_a[name])
        assert row.paired.b == pytest.approx(expected_b[name])
        assert row.paired.delta == pytest.approx(expected_b[name] - expected_a[name])
    assert rows["mean over abilities"].paired.n == len(both)
    assert rows["event_ordering"].paired.n == 1
    markdown = compare_runs("a", "b", results_dir=tmp_path, resamples=RESAMPLES).markdown
    assert "## BEAM rubric scores (official)" in markdown


def test_runs_of_different_benchmarks_do_not_compare(tmp_path: Path) -> None:
    write_locomo(tmp_path, "locomo-run", 0)
    write_beam(tmp_path, "beam-run", 1)
    with pytest.raises(CompareError, match=r"'locomo-run' \(locomo\) and 'beam-run' \(beam\)"):
        build_comparison("locomo-run", "beam-run", results_dir=tmp_path, resamples=RESAMPLES)


def test_runs_on_different_dataset_files_compare_with_a_note(tmp_path: Path) -> None:
    write_locomo(tmp_path, "a", 0)
    write_locomo(tmp_path, "b", 1, sha="e" * 64)
    found = build_comparison("a", "b", results_dir=tmp_path, resamples=RESAMPLES)
    assert found.different_datasets is not None
    assert "dddddddddddd" in found.different_datasets
    assert "eeeeeeeeeeee" in found.different_datasets
    same = build_comparison("a", "a", results_dir=tmp_path, resamples=RESAMPLES)
    assert same.different_datasets is None
    markdown = compare_runs("a", "b", results_dir=tmp_path, resamples=RESAMPLES).markdown
    assert f"**Different dataset files**: {found.different_datasets}." in markdown


def test_a_locomo_report_keeps_each_questions_f1_as_its_figures_add_them(tmp_path: Path) -> None:
    data = write_json(tmp_path / "data.json", [listed_sample("conv-7")])
    refs = prepare_dataset(data, tmp_path / "cache", *splitter_for(None, data)).questions
    answers = [
        HypothesisRow(r.question_id, r.question_type, r.is_abstention, "Ben plays violin, 2023",
                      "single", "fake:x", "v1", 5, 0)
        for r in refs
    ]  # fmt: skip
    figures, _ = locomo_report(tmp_path, refs, [], answers, 10)
    kept = json.loads((tmp_path / QUESTION_SCORES_NAME).read_text())["questions"]
    assert figures["question_scores"] == QUESTION_SCORES_NAME
    assert [q["question_id"] for q in kept] == [r.question_id for r in refs]
    for category, row in figures["categories"].items():
        mine = [q["f1"] for q in kept if q["category"] == category]
        assert row["count"] == len(mine) and row["f1"] == pytest.approx(_mean(mine))
    assert figures["overall_f1"] == pytest.approx(_mean([q["f1"] for q in kept]))


def test_beam_runs_scored_with_other_prompts_need_the_flag(tmp_path: Path) -> None:
    write_beam(tmp_path, "a", 0)
    write_beam(tmp_path, "b", 1, sha="c" * 64)
    with pytest.raises(CompareError, match=r"scored differently: run 'a' .*bbbbbbbbbbbb.*'b'"):
        build_comparison("a", "b", results_dir=tmp_path, resamples=RESAMPLES)
    c = build_comparison(
        "a", "b", results_dir=tmp_path, resamples=RESAMPLES, allow_different_judges=True
    )
    assert c.official is not None and c.official.rows
