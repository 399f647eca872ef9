"""`lme-bench compare RUN_A RUN_B`: compare two runs' QA scores (and retrieval) with paired deltas.

`compare_runs` reads `<results_dir>/<run>/scores.parquet` (and `retrieval.parquet` when both runs
have one), picks one judge's labels per run (lme_bench.compare.load), computes per-type,
task-averaged, overall and abstention accuracies with paired bootstrap intervals of B - A
(lme_bench.compare.paired), and writes `compare-<A>-vs-<B>.{md,json,html,png}` into the output
folder (lme_bench.compare.report, lme_bench.compare.chart). Everything is rendered before the
first file is written, and every file is written atomically: a failure leaves no partial file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lme_bench.compare.chart import chart, render_png
from lme_bench.compare.load import (
    RETRIEVAL_METRICS,
    CompareError,
    SessionRetrieval,
    load_scores,
    load_session_retrieval,
    same_judging,
    select_labels,
)
from lme_bench.compare.paired import MetricComparison, compare_labels, compare_metrics
from lme_bench.compare.report import (
    Comparison,
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


def _retrieval(
    results_dir: Path, run_a: str, run_b: str, resamples: int, seed: int
) -> tuple[list[MetricComparison], list[MetricComparison]] | None:
    """Paired session-level deltas under both averages: the official printer's (every
    non-abstention question) and run_retrieval.py's (those with evidence in user turns)."""
    a = load_session_retrieval(results_dir, run_a)
    b = load_session_retrieval(results_dir, run_b)
    if a is None or b is None:
        return None

    def pairs(only_user_evidence: bool) -> list[MetricComparison]:
        def side(run: dict[str, SessionRetrieval]) -> dict[str, tuple[str, dict[str, float]]]:
            return {
                q: (r.question_type, r.metrics)
                for q, r in run.items()
                if r.user_evidence or not only_user_evidence
            }

        return compare_metrics(side(a), side(b), RETRIEVAL_METRICS, resamples=resamples, seed=seed)

    return pairs(False), pairs(True)


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
    """Read both runs and compute every figure; raises CompareError on bad input."""
    if resamples < 1:
        raise CompareError(f"--resamples must be at least 1, got {resamples}")
    scores_a = load_scores(results_dir, run_a)
    scores_b = load_scores(results_dir, run_b)
    labels_a, labels_b = select_labels(
        scores_a, scores_b, judge, allow_different_judges=allow_different_judges
    )
    retrieval = _retrieval(results_dir, run_a, run_b, resamples, seed)
    return Comparison(
        run_a=run_a,
        run_b=run_b,
        labels_a=labels_a,
        labels_b=labels_b,
        judging_matches=same_judging(labels_a, labels_b),
        qa=compare_labels(labels_a.judged, labels_b.judged, resamples=resamples, seed=seed),
        retrieval=retrieval[0] if retrieval else None,
        retrieval_with_user_evidence=retrieval[1] if retrieval else None,
        resamples=resamples,
        seed=seed,
    )


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
    png = render_png(chart(run_a, run_b, comparison.qa.per_type))
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
