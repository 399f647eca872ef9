"""`lme-bench compare RUN_A RUN_B`: compare two runs' QA scores (and retrieval) with paired deltas.

`compare_runs` reads `<results_dir>/<run>/scores.parquet` when both runs were judged and
`retrieval.parquet` when both have one (retrieval-only runs compare too), picks one judge's labels
per run (lme_bench.compare.load), computes per-type, task-averaged, overall and abstention
accuracies and every retrieval metric at every k with paired bootstrap intervals of B - A
(lme_bench.compare.paired), and writes `compare-<A>-vs-<B>.{md,json,html,png}` into the output
folder (lme_bench.compare.render, lme_bench.compare.chart). Everything is rendered before the
first file is written, and every file is written atomically: a failure leaves no partial file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lme_bench.compare.budgets import run_budget, unequal_budgets
from lme_bench.compare.chart import render_png
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
from lme_bench.compare.paired import compare_labels, compare_metrics
from lme_bench.compare.render import (
    Comparison,
    QaPart,
    RetrievalComparison,
    comparison_chart,
    render_html,
    render_json,
    render_markdown,
)
from lme_bench.results.atomic import write_atomically, write_text_atomically

__all__ = ["CompareError", "CompareOutput", "Comparison", "build_comparison", "compare_runs"]


@dataclass(frozen=True, slots=True)
class CompareOutput:
    comparison: Comparison
    markdown: str
    paths: list[Path]  # .md, .json, .html, .png


def _file_stem(run_a: str, run_b: str) -> str:
    def safe(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", name)

    return f"compare-{safe(run_a)}-vs-{safe(run_b)}"


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
    qa = _qa(results_dir, run_a, run_b, judge, allow_different_judges, resamples, seed)
    retrieval = _retrieval(results_dir, run_a, run_b, resamples, seed)
    if qa is None and not retrieval:
        raise CompareError(
            f"runs {run_a!r} and {run_b!r} have nothing to compare: not both judged "
            "(scores.parquet) and not both with retrieval.parquet"
        )
    budgets = unequal_budgets(
        run_budget(run_dir(results_dir, run_a)), run_budget(run_dir(results_dir, run_b))
    )
    return Comparison(run_a, run_b, qa, retrieval, resamples, seed, budgets)


def compare_runs(
    run_a: str,
    run_b: str,
    *,
    results_dir: Path = Path("results"),
    judge: str | None = None,
    allow_different_judges: bool = False,
    out: Path | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> CompareOutput:
    """Compare two runs and write the .md, .json, .html and .png reports into `out`.

    `out` defaults to `<results_dir>/compare`.
    """
    comparison = build_comparison(
        run_a,
        run_b,
        results_dir=results_dir,
        judge=judge,
        allow_different_judges=allow_different_judges,
        resamples=resamples,
        seed=seed,
    )
    markdown = render_markdown(comparison)
    texts = {
        ".md": markdown,
        ".json": render_json(comparison),
        ".html": render_html(comparison),
    }
    png = render_png(comparison_chart(comparison))
    folder = Path(out) if out is not None else Path(results_dir) / "compare"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CompareError(f"cannot create the output folder {folder}: {exc}") from exc
    stem = _file_stem(run_a, run_b)
    paths: list[Path] = []
    for suffix, text in texts.items():
        path = folder / f"{stem}{suffix}"
        write_text_atomically(path, text)
        paths.append(path)
    png_path = folder / f"{stem}.png"
    write_atomically(png_path, lambda tmp: tmp.write_bytes(png))
    paths.append(png_path)
    return CompareOutput(comparison, markdown, paths)
