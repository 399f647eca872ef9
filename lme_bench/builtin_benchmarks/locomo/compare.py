"""LoCoMo's `compare` report hook (locomo.report_hooks): each question's
official token F1 as the run's report scored it (`locomo_scores.json`, locomo.report);
per category and overall the mean F1 of A and of B over the questions scored in both runs, as
the official statistics average them (each question once). Intervals: the paired percentile
bootstrap of lme_bench.compare.paired, resampled within each category.
"""

from __future__ import annotations

from pathlib import Path

from lme_bench.benchmarks.report_hooks import CompareRequest
from lme_bench.builtin_benchmarks.locomo.benchmark import CATEGORY_NAMES
from lme_bench.builtin_benchmarks.locomo.report_hooks import QUESTION_SCORES as LOCOMO_SCORES
from lme_bench.compare.load import CompareError, run_dir
from lme_bench.compare.official import OfficialPart, read_json
from lme_bench.compare.paired import Groups, MetricComparison, paired_delta, pooled

LOCOMO_METRIC = (
    "token F1 (official LoCoMo metric; each question as task_eval/evaluation.py scores it)"
)


def _locomo_f1(results_dir: Path, run_id: str) -> dict[str, tuple[str, float]] | None:
    """Question id -> (category, official F1); None when the run kept no per-question F1."""
    path = run_dir(results_dir, run_id) / LOCOMO_SCORES
    found = read_json(path)
    if found is None:
        return None
    try:
        return {q["question_id"]: (q["category"], float(q["f1"])) for q in found["questions"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise CompareError(f"{path} is not a LoCoMo per-question score file: {exc}") from exc


def compare_locomo(request: CompareRequest) -> OfficialPart:
    results_dir, run_a, run_b = request.results_dir, request.run_a, request.run_b
    resamples, seed = request.resamples, request.seed
    a, b = _locomo_f1(results_dir, run_a), _locomo_f1(results_dir, run_b)
    if a is None or b is None:
        missing = run_a if a is None else run_b
        return OfficialPart(
            request.benchmark,
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
    return OfficialPart(request.benchmark, LOCOMO_METRIC, rows)
