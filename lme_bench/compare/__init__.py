"""Comparing two runs' QA scores (and retrieval) with paired deltas, as data.

`build_comparison` reads `<results_dir>/<run>/scores.parquet` when both runs were judged and
`retrieval.parquet` when both have one (retrieval-only runs compare too), picks one judge's labels
per run (lme_bench.compare.load), computes per-type, task-averaged, overall and abstention
accuracies and every retrieval metric at every k with paired bootstrap intervals of B - A
(lme_bench.compare.paired), beside each run's budgets and memory system (lme_bench.compare.budgets).
A benchmark's own official figures, paired per question, come from its `compare` report hook
(lme_bench.benchmarks.report_hooks: LoCoMo's F1, BEAM's rubric scores in place of QA accuracy);
runs of different benchmarks do not compare (lme_bench.compare.official).
`lme-bench compare` renders and writes it (lme_bench.report.compare).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lme_bench.benchmarks.report_hooks import CompareRequest, report_hooks_of
from lme_bench.compare.budgets import run_budget, unequal_budgets
from lme_bench.compare.comparison import Comparison, QaPart, RetrievalComparison
from lme_bench.compare.load import (
    GRANULARITIES,
    RETRIEVAL_METRICS,
    CompareError,
    QuestionRetrieval,
    load_retrieval,
    load_scores,
    run_dir,
    same_judging,
    select_labels,
)
from lme_bench.compare.official import OTHER, check_same_data
from lme_bench.compare.paired import compare_labels, compare_metrics

__all__ = ["CompareError", "Comparison", "build_comparison"]


def _side(
    run: dict[str, QuestionRetrieval], only_user_evidence: bool
) -> dict[str, tuple[str, dict[str, float]]]:
    return {
        q: (r.question_type, r.metrics)
        for q, r in run.items()
        if r.user_evidence or not only_user_evidence
    }


def _retrieval(
    results_dir: Path, run_a: str, run_b: str, resamples: int, seed: int
) -> list[RetrievalComparison]:
    """Paired deltas of every metric at every k, per granularity, under both averages: the
    official printer's (every non-abstention question) and run_retrieval.py's (those with
    evidence in user turns). Empty when a run has no retrieval.parquet."""
    found = []
    for granularity in GRANULARITIES:
        a = load_retrieval(results_dir, run_a, granularity)
        b = load_retrieval(results_dir, run_b, granularity)
        if a is None or b is None:
            return []
        averages = [
            compare_metrics(
                _side(a, only), _side(b, only), RETRIEVAL_METRICS, resamples=resamples, seed=seed
            )
            for only in (False, True)
        ]
        found.append(RetrievalComparison(granularity, *averages))
    return found


def _qa(
    results_dir: Path,
    run_a: str,
    run_b: str,
    judge: str | None,
    allow_different_judges: bool,
    resamples: int,
    seed: int,
) -> QaPart | None:
    """The QA comparison, when both runs were judged."""
    scores_a, scores_b = load_scores(results_dir, run_a), load_scores(results_dir, run_b)
    if scores_a is None or scores_b is None:
        return None
    labels_a, labels_b = select_labels(
        scores_a, scores_b, judge, allow_different_judges=allow_different_judges
    )
    return QaPart(
        labels_a=labels_a,
        labels_b=labels_b,
        judging_matches=same_judging(labels_a, labels_b),
        scores=compare_labels(labels_a.judged, labels_b.judged, resamples=resamples, seed=seed),
    )


def build_comparison(
    run_a: str,
    run_b: str,
    *,
    results_dir: Path = Path("results"),
    judge: str | None = None,
    allow_different_judges: bool = False,
    resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Read both runs and compute every figure they both have; raises CompareError on bad
    input or when the runs share nothing to compare."""
    if resamples < 1:
        raise CompareError(f"--resamples must be at least 1, got {resamples}")
    found, datasets = check_same_data(results_dir, run_a, run_b)
    benchmark, source = (found.name, found.source) if found else (None, None)
    qa, official = None, None
    hooks = report_hooks_of(benchmark or OTHER, source)
    if hooks.replaces_qa is None:  # else no verdicts: the benchmark's own figures stand for QA
        qa = _qa(results_dir, run_a, run_b, judge, allow_different_judges, resamples, seed)
    if hooks.compare is not None:
        asked = (results_dir, run_a, run_b, judge, allow_different_judges, resamples, seed)
        request = CompareRequest(str(benchmark), *asked)
        official = hooks.call("compare", request)
        if official is not None and source is not None:  # its words are found from there too
            official = dataclasses.replace(official, source=source)
    retrieval = _retrieval(results_dir, run_a, run_b, resamples, seed)
    if qa is None and not retrieval and not (official and official.rows):
        raise CompareError(
            f"runs {run_a!r} and {run_b!r} have nothing to compare: not both judged "
            "(scores.parquet) and not both with retrieval.parquet"
        )
    budget_a = run_budget(run_dir(results_dir, run_a))
    budget_b = run_budget(run_dir(results_dir, run_b))
    budgets = unequal_budgets(budget_a, budget_b)
    return Comparison(
        run_a,
        run_b,
        qa,
        retrieval,
        resamples,
        seed,
        budgets,
        (budget_a, budget_b),
        benchmark,
        official,
        datasets,
        source,
    )
