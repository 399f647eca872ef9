"""`lme-bench compare`: paired deltas, first verdicts, judge checks, the written reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.command import main

import lme_bench.report.compare as compare_pkg
from lme_bench.compare import CompareError, build_comparison
from lme_bench.compare.paired import (
    overall_delta,
    paired_bootstrap,
    task_averaged_delta,
)
from lme_bench.metrics.ranking_metrics import K_VALUES, METRIC_NAMES
from lme_bench.report.compare import compare_runs
from lme_bench.results.atomic import write_atomically
from lme_bench.results.qa_tables import ScoreRow, scores_table
from lme_bench.results.tables import retrieval_table
from lme_bench.retrieval.official_ids import RetrievalRow

LLM = "openai:gpt-4o-2024-08-06"
FALLBACK = "fallback:normalized-match"
SHA = "a" * 64
TYPES = {
    "p": "single-session-preference",
    "t": "temporal-reasoning",
    "k": "knowledge-update",
    "m": "multi-session",
}
RESAMPLES = 400
T, F, E = True, False, None  # E: a failed judge call (status error, no label)

# question id -> the LLM judge's verdicts over repeats.
RUN_A: dict[str, list[bool | None]] = {
    "t0": [T, T, F],  # the first verdict counts: correct
    **{f"t{i}": [T] for i in range(1, 8)},
    "t8": [F],
    "t9": [F, T, T],  # wrong, though later repeats say correct
    "t10": [E, T],  # the first call failed: not judged in A, so not paired
    "k0": [T],
    "k1": [F],
    "k2_abs": [T],
    "k3": [T],
    "p0": [F],
}
RUN_B: dict[str, list[bool | None]] = {
    **{f"t{i}": [T] for i in range(7)},
    "t7": [F],
    "t8": [T, E, E],  # correct: later failed repeats change nothing
    "t9": [T],
    "t10": [T],
    "k0": [T],
    "k1": [T],
    "k2_abs": [F],
    "k3": [E],  # no ok verdict: not judged in B
    "p0": [T],
    "m0": [T],  # multi-session: only in B
}


def _score(qid: str, label: bool | None, repeat: int, judge: str = LLM, sha: str = SHA) -> ScoreRow:
    qtype = TYPES[qid[0]]
    kind = "llm" if judge == LLM else "fallback"
    return ScoreRow(
        question_id=qid,
        question_type=qtype,
        is_abstention=qid.endswith("_abs"),
        judge=judge,
        judge_kind=kind,
        repeat=repeat,
        prompt_version="v1",
        prompt_name="abstention" if qid.endswith("_abs") else qtype,
        prompt_sha256=sha if kind == "llm" else "f" * 64,
        label=label,
        readable=None if label is None else True,
        raw_verdict="" if label is None else ("yes" if label else "no"),
        status="error" if label is None else "ok",
        attribution="reader",
        error="timeout" if label is None else None,
    )


def write_run(
    results: Path,
    run_id: str,
    spec: dict[str, list[bool | None]],
    *,
    judges: tuple[str, ...] = (LLM, FALLBACK),
    sha: dict[str, str] | None = None,
) -> Path:
    rows = []
    for qid, verdicts in spec.items():
        if LLM in judges:
            this_sha = (sha or {}).get(TYPES[qid[0]], SHA)
            rows += [_score(qid, v, r, LLM, this_sha) for r, v in enumerate(verdicts)]
        if FALLBACK in judges:
            rows.append(_score(qid, True, 0, FALLBACK))
    folder = results / run_id
    folder.mkdir(parents=True)
    pq.write_table(scores_table(run_id, rows), folder / "scores.parquet")
    return folder


def _retrieval(
    qid: str,
    values: tuple[float, float, float],
    status: str = "ok",
    n_evidence: int = 1,
    granularity: str = "session",
) -> RetrievalRow:
    """`values`: recall_any, recall_all and ndcg_any, the same at every k."""
    metrics = {
        f"{name}@{k}": value
        for k in K_VALUES
        for name, value in zip(("recall_any", "recall_all", "ndcg_any"), values, strict=True)
    }
    return RetrievalRow(
        qid, TYPES[qid[0]], qid.endswith("_abs"), granularity, ["s1"], metrics, n_evidence, status
    )


def write_retrieval(folder: Path, rows: list[RetrievalRow], turn_recall: float = 0.0) -> None:
    turn = _retrieval("t0", (turn_recall, 0.0, 0.0), granularity="turn")
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(retrieval_table(folder.name, [*rows, turn]), folder / "retrieval.parquet")


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_retrieval(
        write_run(root, "run-a", RUN_A),
        [
            _retrieval("t0", (1.0, 0.0, 0.5)),
            _retrieval("t1", (0.0, 0.0, 0.0), n_evidence=0),  # no evidence in user turns
            _retrieval("k0", (1.0, 1.0, 1.0)),
            _retrieval("k2_abs", (0.0, 0.0, 0.0)),  # abstention: skipped
        ],
    )
    write_retrieval(
        write_run(root, "run-b", RUN_B),
        [
            _retrieval("t0", (1.0, 1.0, 1.0)),
            _retrieval("t1", (1.0, 0.0, 0.63), n_evidence=0),
            _retrieval("k0", (0.0, 0.0, 0.0), status="error"),  # not ok in B: not paired
            _retrieval("k2_abs", (1.0, 1.0, 1.0)),
        ],
    )
    return root


def _compare(results: Path, run_b: str = "run-b", **options: Any) -> Any:
    """Compare run-a with `run_b` into results/compare; the JSON report, parsed."""
    out = compare_runs("run-a", run_b, results_dir=results, resamples=RESAMPLES, **options)
    return json.loads(out.paths[1].read_text())


def test_per_type_task_averaged_and_overall_deltas_by_hand(results: Path) -> None:
    c = build_comparison("run-a", "run-b", results_dir=results, resamples=RESAMPLES)
    rows = {r.name: r for r in c.qa.scores.per_type}
    assert list(rows) == [TYPES["p"], TYPES["t"], TYPES["k"], TYPES["m"]]
    temporal = rows[TYPES["t"]]
    assert (temporal.a.correct, temporal.a.n) == (8, 10)  # t10 not judged in A
    assert (temporal.b.correct, temporal.b.n) == (10, 11)
    assert temporal.paired.n == 10
    assert temporal.paired.delta == pytest.approx(0.9 - 0.8)
    knowledge = rows[TYPES["k"]]
    assert (knowledge.a.correct, knowledge.a.n, knowledge.b.n) == (3, 4, 3)  # k3: no ok row in B
    assert knowledge.paired.n == 3 and knowledge.paired.delta == pytest.approx(0.0)
    assert rows[TYPES["p"]].paired.delta == pytest.approx(1.0)

    # Task-averaged: mean of the per-type deltas; overall: pooled over the 14 paired questions.
    task, overall = c.qa.scores.task_averaged.paired, c.qa.scores.overall.paired
    assert task.delta == pytest.approx((0.1 + 0.0 + 1.0) / 3)
    assert overall.delta == pytest.approx(12 / 14 - 10 / 14)
    assert task.delta != pytest.approx(overall.delta)
    assert c.qa.scores.task_averaged.a.value == pytest.approx((0.8 + 0.75 + 0.0) / 3)
    assert c.qa.scores.task_averaged.b.value == pytest.approx((10 / 11 + 2 / 3 + 1.0 + 1.0) / 4)
    assert c.qa.scores.overall.b.value == pytest.approx(14 / 16)
    abstention = c.qa.scores.abstention
    assert abstention.paired.n == 1 and abstention.paired.delta == pytest.approx(-1.0)
    assert (c.qa.labels_a.not_judged, c.qa.labels_b.not_judged) == (1, 1)


def test_type_in_one_run_is_reported_without_delta(results: Path) -> None:
    data = _compare(results)
    multi = data["qa"]["per_type"]["multi-session"]
    assert multi["a"] == {"accuracy": None, "correct": 0, "n": 0, "ci95": None}
    assert multi["b"]["accuracy"] == 1.0 and multi["b"]["n"] == 1
    assert multi["paired"] == {"n": 0, "a": None, "b": None, "delta": None, "ci95": None}


def test_paired_interval_contains_delta_and_is_seeded(results: Path) -> None:
    first = build_comparison("run-a", "run-b", results_dir=results, resamples=RESAMPLES, seed=7)
    again = build_comparison("run-a", "run-b", results_dir=results, resamples=RESAMPLES, seed=7)
    assert first.qa == again.qa and first.retrieval == again.retrieval
    for row in [
        *first.qa.scores.per_type[:3],
        first.qa.scores.task_averaged,
        first.qa.scores.overall,
    ]:
        assert row.paired.ci95 is not None and row.paired.delta is not None
        low, high = row.paired.ci95
        assert low <= row.paired.delta <= high, row.name
    assert first.qa.scores.overall.paired.ci95 != (0.0, 0.0)

    groups = {"x": [(1.0, 1.0), (0.0, 1.0), (1.0, 0.0), (0.0, 1.0)], "y": [(1.0, 1.0)]}
    assert paired_bootstrap(groups, overall_delta, seed=3) == paired_bootstrap(
        groups, overall_delta, seed=3
    )
    same = {"x": [(1.0, 1.0), (0.0, 0.0)]}
    assert paired_bootstrap(same, overall_delta) == (0.0, 0.0)  # pairs move together
    assert paired_bootstrap({}, task_averaged_delta) is None


def test_flipped_questions_exact(results: Path) -> None:
    flips = _compare(results)["qa"]["flips"]
    assert flips["correct_to_wrong"] == [
        {"question_id": "t7", "question_type": TYPES["t"]},
        {"question_id": "k2_abs", "question_type": TYPES["k"]},
    ]
    assert flips["wrong_to_correct"] == [
        {"question_id": "p0", "question_type": TYPES["p"]},
        {"question_id": "t8", "question_type": TYPES["t"]},
        {"question_id": "t9", "question_type": TYPES["t"]},
        {"question_id": "k1", "question_type": TYPES["k"]},
    ]


def test_session_retrieval_deltas(results: Path) -> None:
    retrieval = _compare(results)["retrieval"]["session"]["metrics"]
    assert retrieval["recall_any@5"]["n"] == 2  # t0, t1: ok in both, not abstention
    assert retrieval["recall_any@5"]["delta"] == pytest.approx(1.0 - 0.5)
    assert retrieval["recall_all@5"]["delta"] == pytest.approx(0.5 - 0.0)
    assert retrieval["ndcg_any@5"]["delta"] == pytest.approx((1.0 + 0.63) / 2 - 0.25)
    low, high = retrieval["ndcg_any@5"]["ci95"]
    assert low <= (1.0 + 0.63) / 2 - 0.25 <= high


def test_session_retrieval_deltas_under_run_retrievals_average(results: Path) -> None:
    found = _compare(results)["retrieval"]["session"]["with_user_evidence"]
    assert found["recall_any@5"]["n"] == 1  # t0 only: t1 has no evidence in user turns
    assert (found["recall_all@5"]["a"], found["recall_all@5"]["b"]) == (0.0, 1.0)
    assert found["ndcg_any@5"]["delta"] == pytest.approx(1.0 - 0.5)
    markdown = (results / "compare" / "compare-run-a-vs-run-b.md").read_text()
    assert "| official printer (skip `_abs`) | recall_any@5 | 2 |" in markdown
    assert "| run_retrieval.py (also skip no user-turn evidence) | recall_any@5 | 1 |" in markdown


def test_retrieval_only_runs_compare_at_every_k_and_level(results: Path) -> None:
    write_retrieval(results / "ret-a", [_retrieval("t0", (0.0, 0.0, 0.0))], turn_recall=0.0)
    write_retrieval(results / "ret-b", [_retrieval("t0", (1.0, 1.0, 0.5))], turn_recall=1.0)
    out = compare_runs("ret-a", "ret-b", results_dir=results, resamples=RESAMPLES)
    data = json.loads(out.paths[1].read_text())
    assert data["qa"] is None
    session = data["retrieval"]["session"]["metrics"]
    assert set(session) == set(METRIC_NAMES)  # recall_any, recall_all, ndcg_any at every k
    assert session["recall_all@50"]["delta"] == 1.0 and session["ndcg_any@1"]["delta"] == 0.5
    assert data["retrieval"]["turn"]["metrics"]["recall_any@10"]["delta"] == 1.0
    assert "QA not compared: not both runs were judged" in out.markdown
    assert "## Retrieval (turn level)" in out.markdown
    assert out.paths[3].read_bytes().startswith(b"\x89PNG")  # a retrieval chart


def test_judge_choice_and_mismatch(results: Path) -> None:
    fallback = _compare(results, judge=FALLBACK)
    assert fallback["runs"]["a"]["judge"] == FALLBACK
    assert fallback["qa"]["overall"]["paired"]["delta"] == 0.0

    write_run(results, "run-c", RUN_B, judges=(FALLBACK,))
    with pytest.raises(CompareError) as error:
        _compare(results, "run-c")
    assert all(s in str(error.value) for s in ("run-a", LLM, "run-c", FALLBACK))
    allowed = _compare(results, "run-c", allow_different_judges=True)
    assert allowed["qa"]["judging_matches"] is False
    assert allowed["runs"]["b"]["judge"] == FALLBACK

    write_run(results, "run-d", RUN_B, sha={TYPES["t"]: "b" * 64})  # a changed prompt
    with pytest.raises(CompareError, match="bbbbbbbbbbbb"):
        _compare(results, "run-d", judge=LLM)
    assert _compare(results, "run-d", allow_different_judges=True)["qa"]["judging_matches"] is False
    with pytest.raises(CompareError, match="no scores by judge 'nobody'"):
        _compare(results, judge="nobody")


def test_missing_run_or_scores_is_exit_2(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "run-a", "nope", "--results-dir", str(results)]) == 2
    assert str(results / "nope") in capsys.readouterr().err
    (results / "empty").mkdir()
    assert main(["compare", "empty", "run-b", "--results-dir", str(results)]) == 2
    assert "'empty' and 'run-b' have nothing to compare" in capsys.readouterr().err
    assert not (results / "compare").exists()


def test_cli_writes_all_reports_atomically(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["compare", "run-a", "run-b", "--results-dir", str(results), "--out", str(out)]
    assert main([*argv, "--resamples", str(RESAMPLES)]) == 0
    stdout = capsys.readouterr().out
    assert "| question type |" in stdout and "task-averaged (mean of per-type" in stdout
    stem = out / "compare-run-a-vs-run-b"
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"{stem.name}{s}" for s in (".html", ".json", ".md", ".png")]
    assert stem.with_suffix(".png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    html = stem.with_suffix(".html").read_text()
    assert html.count("<svg") == 1 and html.count('class="bar-group"') == 4
    assert "<script" not in html and "src=" not in html and "href=" not in html
    assert "overall (mean over all judged questions)" in stem.with_suffix(".md").read_text()
    assert json.loads(stem.with_suffix(".json").read_text())["bootstrap"]["resamples"] == RESAMPLES


def test_failure_leaves_nothing_half_written(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(chart: object) -> bytes:
        raise RuntimeError("no PNG today")

    monkeypatch.setattr(compare_pkg, "render_png", broken)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        compare_runs("run-a", "run-b", results_dir=results, out=out, resamples=RESAMPLES)
    assert not out.exists() or list(out.iterdir()) == []


def test_interrupted_write_leaves_no_partial_file(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = write_atomically

    def half_then_fail(path: Path, write: Callable[[Path], object]) -> None:
        def partial(tmp: Path) -> None:
            tmp.write_bytes(b"\x89PNG half")
            raise OSError("disk full")

        real(path, partial)

    monkeypatch.setattr("lme_bench.report.compare.write_atomically", half_then_fail)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        compare_runs("run-a", "run-b", results_dir=results, out=out, resamples=RESAMPLES)
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "compare-run-a-vs-run-b.html",
        "compare-run-a-vs-run-b.json",
        "compare-run-a-vs-run-b.md",
    ]
    assert json.loads((out / names[1]).read_text())["qa"]["overall"]["paired"]["n"] == 14


def test_questions_the_gold_flags_as_abstention_are_the_abstention_row(tmp_path: Path) -> None:
    """LoCoMo's adversarial questions carry no `_abs` in their ids; their rows' flag says."""
    root = tmp_path / "results"
    for run_id, label in (("run-a", False), ("run-b", True)):
        rows = [_score("k0", True, 0), replace(_score("k1", label, 0), is_abstention=True)]
        (root / run_id).mkdir(parents=True)
        pq.write_table(scores_table(run_id, rows), root / run_id / "scores.parquet")
    abstention = build_comparison("run-a", "run-b", results_dir=root, resamples=RESAMPLES)
    row = abstention.qa.scores.abstention
    assert (row.a.n, row.b.n) == (1, 1)
    assert row.paired.n == 1 and row.paired.delta == pytest.approx(1.0)
