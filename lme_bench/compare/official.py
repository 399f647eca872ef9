"""Each benchmark's own official figures, paired per question across two runs.

- LoCoMo: each question's official token F1 as the run's report scored it (`locomo_scores.json`,
  lme_bench.report.locomo); per category and overall the mean F1 of A and of B over the
  questions scored in both runs, as the official statistics average them (each question once).
- BEAM: each question's rubric score (scores.parquet `score`, repeat 0 with status ok) by the
  judge the run's report leads with (summary.json `beam.judge`, or `--judge`); per ability the
  mean within each chat, then over the chats, and the mean over abilities, as BEAM's
  report_results.py averages (lme_bench.benchmarks.beam.scoring.aggregate), over the questions
  scored in both runs. An undefined (NaN) score leaves its question out.

Intervals: the paired percentile bootstrap of lme_bench.compare.paired, resampled within each
category (LoCoMo) or each ability and chat (BEAM).

Two runs compare only on the same benchmark and the same dataset file (manifest.json's sha256);
otherwise CompareError names both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.beam.scoring import QuestionScore, aggregate
from lme_bench.benchmarks.builtin.locomo import CATEGORY_NAMES
from lme_bench.compare.load import CompareError, RunScores, run_dir
from lme_bench.compare.paired import Groups, MetricComparison, paired_delta, pooled

LOCOMO_SCORES = "locomo_scores.json"  # each question's F1, written by lme_bench.report.locomo
OFFICIAL_BENCHMARKS = ("locomo", "beam")
_CELL = "\t"  # joins a BEAM stratum's ability and chat into one group name


@dataclass(frozen=True, slots=True)
class OfficialPart:
    benchmark: str  # locomo | beam
    metric: str  # what the figures are
    rows: list[MetricComparison]  # per category or ability, then the headline row
    judge: str | None = None  # BEAM: whose rubric scores
    note: str | None = None  # why nothing was compared, when rows is empty


def _json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CompareError(f"cannot read {path}: {exc}") from exc
    if not isinstance(found, dict):
        raise CompareError(f"{path} does not hold a JSON object")
    return found


def run_benchmark(results_dir: Path, run_id: str) -> str | None:
    """locomo | beam when the run's summary has that benchmark's section, `other` for any other
    summary (LongMemEval or a plug-in benchmark), None without a summary.json."""
    summary = _json(run_dir(results_dir, run_id) / "summary.json")
    if summary is None:
        return None
    return next((b for b in OFFICIAL_BENCHMARKS if summary.get(b)), "other")


def dataset_sha256(results_dir: Path, run_id: str) -> str | None:
    manifest = _json(run_dir(results_dir, run_id) / "manifest.json")
    dataset = (manifest or {}).get("dataset") or {}
    sha = dataset.get("sha256") if isinstance(dataset, dict) else None
    return sha if isinstance(sha, str) else None


def check_same_data(results_dir: Path, run_a: str, run_b: str) -> tuple[str | None, str | None]:
    """The runs' shared benchmark (None: not known), and a note when they were made on
    different dataset files (LongMemEval's oracle and S files ask the same questions over other
    haystacks: such runs compare, paired by question id, with the note shown); CompareError
    when the runs are of different benchmarks (as far as both runs recorded it)."""
    bench_a, bench_b = run_benchmark(results_dir, run_a), run_benchmark(results_dir, run_b)
    if bench_a and bench_b and bench_a != bench_b:
        raise CompareError(
            f"runs {run_a!r} ({_name(bench_a)}) and {run_b!r} ({_name(bench_b)}) are runs of "
            "different benchmarks: their figures are not comparable"
        )
    sha_a, sha_b = dataset_sha256(results_dir, run_a), dataset_sha256(results_dir, run_b)
    note = None
    if sha_a and sha_b and sha_a != sha_b:
        note = (
            f"runs {run_a!r} (dataset sha256 {sha_a[:12]}) and {run_b!r} (dataset sha256 "
            f"{sha_b[:12]}) were made on different dataset files: questions are paired by id,"
            " which is the same question only if both files hold it alike (manifest.json)"
        )
    return bench_a or bench_b, note


def _name(benchmark: str) -> str:
    return "LongMemEval or a plug-in benchmark" if benchmark == "other" else benchmark


# ---- LoCoMo ----------------------------------------------------------------------------------

LOCOMO_METRIC = (
    "token F1 (official LoCoMo metric; each question as task_eval/evaluation.py scores it)"
)


def _locomo_f1(results_dir: Path, run_id: str) -> dict[str, tuple[str, float]] | None:
    """Question id -> (category, official F1); None when the run kept no per-question F1."""
    path = run_dir(results_dir, run_id) / LOCOMO_SCORES
    found = _json(path)
    if found is None:
        return None
    try:
        return {q["question_id"]: (q["category"], float(q["f1"])) for q in found["questions"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise CompareError(f"{path} is not a LoCoMo per-question score file: {exc}") from exc


def compare_locomo(
    results_dir: Path, run_a: str, run_b: str, resamples: int, seed: int
) -> OfficialPart:
    a, b = _locomo_f1(results_dir, run_a), _locomo_f1(results_dir, run_b)
    if a is None or b is None:
        missing = run_a if a is None else run_b
        return OfficialPart(
            "locomo",
            LOCOMO_METRIC,
            [],
            note=f"F1 not compared: run {missing!r} has no {LOCOMO_SCORES} (no answers were "
            "scored, or it was reported before per-question F1 was kept).",
        )
    groups: Groups = {}
    for qid in sorted(a.keys() & b.keys()):
        groups.setdefault(a[qid][0], []).append((a[qid][1], b[qid][1]))
    order = [c for c in CATEGORY_NAMES.values() if c in groups]
    rows = [
        MetricComparison(c, paired_delta({c: groups[c]}, pooled, resamples, seed)) for c in order
    ]
    rows.append(MetricComparison("overall", paired_delta(groups, pooled, resamples, seed)))
    return OfficialPart("locomo", LOCOMO_METRIC, rows)


# ---- BEAM ------------------------------------------------------------------------------------

BEAM_METRIC = "rubric score (official BEAM metric, 0-1; per ability the mean over chats)"


def _beam_judge(results_dir: Path, run_id: str) -> str | None:
    summary = _json(run_dir(results_dir, run_id) / "summary.json") or {}
    judge = (summary.get("beam") or {}).get("judge")
    return judge if isinstance(judge, str) else None


def _beam_scores(run: RunScores, judge: str) -> dict[str, tuple[str, float]]:
    """Question id -> (`ability<TAB>chat`, score) for the judge's first judgment."""
    found: dict[str, tuple[str, float]] = {}
    for r in run.records:
        if r.judge != judge or r.repeat != 0 or r.status != "ok" or r.score is None:
            continue
        if math.isnan(r.score):
            continue
        chat = r.question_id.rpartition(":")[0] or r.question_id
        found[r.question_id] = (f"{r.question_type}{_CELL}{chat}", r.score)
    return found


def _prompts(run: RunScores, judge: str) -> dict[str, set[str]]:
    """Prompt name -> the sha256 values the judge's rows record (BEAM's prompts as read)."""
    found: dict[str, set[str]] = {}
    for r in run.records:
        if r.judge == judge:
            found.setdefault(r.prompt_name, set()).add(r.prompt_sha256)
    return found


def _hashes(prompts: dict[str, set[str]]) -> str:
    return ", ".join(sorted({sha[:12] for shas in prompts.values() for sha in shas})) or "none"


def _beam_statistic(ability: str | None) -> Callable[[Groups, int], float | None]:
    """One side's BEAM figure over stratified pairs: an ability's score, or (None) the mean over
    abilities, by BEAM's own averaging."""

    def statistic(groups: Groups, side: int) -> float | None:
        scores = [
            QuestionScore(cell.partition(_CELL)[2], cell.partition(_CELL)[0], pair[side])
            for cell, pairs in groups.items()
            for pair in pairs
        ]
        if not scores:
            return None
        report = aggregate(scores)
        return report.overall if ability is None else report.per_ability.get(ability)

    return statistic


def compare_beam(
    results_dir: Path,
    runs: tuple[RunScores | None, RunScores | None],
    judge: str | None,
    allow_different_judges: bool,
    resamples: int,
    seed: int,
) -> OfficialPart:
    run_a, run_b = runs
    if run_a is None or run_b is None:
        return OfficialPart("beam", BEAM_METRIC, [], note="Not compared: not both runs judged.")
    judge_a = judge or _beam_judge(results_dir, run_a.run_id)
    judge_b = judge or _beam_judge(results_dir, run_b.run_id)
    if judge_a is None or judge_b is None:
        missing = run_a.run_id if judge_a is None else run_b.run_id
        return OfficialPart(
            "beam", BEAM_METRIC, [], note=f"Not compared: no LLM judge scored run {missing!r}."
        )
    prompts_a, prompts_b = _prompts(run_a, judge_a), _prompts(run_b, judge_b)
    same_prompts = all(prompts_a[n] == prompts_b[n] for n in prompts_a.keys() & prompts_b.keys())
    if (judge_a != judge_b or not same_prompts) and not allow_different_judges:
        raise CompareError(
            f"the BEAM runs were scored differently: run {run_a.run_id!r} by {judge_a} "
            f"(prompts {_hashes(prompts_a)}), run {run_b.run_id!r} by {judge_b} (prompts "
            f"{_hashes(prompts_b)}); pass --allow-different-judges to compare anyway"
        )
    a, b = _beam_scores(run_a, judge_a), _beam_scores(run_b, judge_b)
    groups: Groups = {}
    for qid in sorted(a.keys() & b.keys()):
        groups.setdefault(a[qid][0], []).append((a[qid][1], b[qid][1]))
    abilities = aggregate(
        [QuestionScore("", cell.partition(_CELL)[0], 0.0) for cell in groups]
    ).per_ability  # BEAM's own order of the abilities present
    rows = []
    for ability in abilities:
        mine = {cell: pairs for cell, pairs in groups.items() if cell.startswith(ability + _CELL)}
        statistic = _beam_statistic(ability)
        rows.append(MetricComparison(ability, paired_delta(mine, statistic, resamples, seed)))
    overall = paired_delta(groups, _beam_statistic(None), resamples, seed)
    rows.append(MetricComparison("mean over abilities", overall))
    shown = judge_a if judge_a == judge_b else f"{judge_a} (A), {judge_b} (B)"
    return OfficialPart("beam", BEAM_METRIC, rows, judge=shown)
