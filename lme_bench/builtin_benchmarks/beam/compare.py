"""BEAM's `compare` report hook (beam.report_hooks): each question's
rubric score (scores.parquet `score`, repeat 0 with status ok) by the judge the run's report
leads with (summary.json `beam.judge`, or `--judge`); per ability the mean within each chat,
then over the chats, and the mean over abilities, as BEAM's report_results.py averages
(beam.scoring.aggregate), over the questions scored in both runs. An
undefined (NaN) score leaves its question out. Intervals: the paired percentile bootstrap of
lme_bench.compare.paired, resampled within each ability and chat.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from lme_bench.benchmarks.report_hooks import CompareRequest
from lme_bench.builtin_benchmarks.beam.scoring import QuestionScore, aggregate
from lme_bench.compare.load import CompareError, RunScores, load_scores
from lme_bench.compare.official import OfficialPart, run_summary
from lme_bench.compare.paired import Groups, MetricComparison, paired_delta

_CELL = "\t"  # joins a BEAM stratum's ability and chat into one group name

BEAM_METRIC = "rubric score (official BEAM metric, 0-1; per ability the mean over chats)"


def _beam_judge(results_dir: Path, run_id: str, benchmark: str) -> str | None:
    """The judge the run's BEAM section (summary.json, under the benchmark's name) leads with."""
    summary = run_summary(results_dir, run_id)
    judge = ((summary.section(benchmark) if summary else None) or {}).get("judge")
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


def compare_beam(request: CompareRequest) -> OfficialPart:
    results_dir, judge = request.results_dir, request.judge
    resamples, seed = request.resamples, request.seed
    run_a = load_scores(results_dir, request.run_a)
    run_b = load_scores(results_dir, request.run_b)
    if run_a is None or run_b is None:
        note = "Not compared: not both runs judged."
        return OfficialPart(request.benchmark, BEAM_METRIC, [], note=note)
    judge_a = judge or _beam_judge(results_dir, run_a.run_id, request.benchmark)
    judge_b = judge or _beam_judge(results_dir, run_b.run_id, request.benchmark)
    if judge_a is None or judge_b is None:
        missing = run_a.run_id if judge_a is None else run_b.run_id
        note = f"Not compared: no LLM judge scored run {missing!r}."
        return OfficialPart(request.benchmark, BEAM_METRIC, [], note=note)
    prompts_a, prompts_b = _prompts(run_a, judge_a), _prompts(run_b, judge_b)
    same_prompts = all(prompts_a[n] == prompts_b[n] for n in prompts_a.keys() & prompts_b.keys())
    if (judge_a != judge_b or not same_prompts) and not request.allow_different_judges:
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
    return OfficialPart(request.benchmark, BEAM_METRIC, rows, judge=shown)
