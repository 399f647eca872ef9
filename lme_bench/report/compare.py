"""`lme-bench compare RUN_A RUN_B`: build the comparison (lme_bench.compare) and write
`compare-<A>-vs-<B>.{md,json,html,png}` into the output folder. Everything is rendered before
the first file is written, and every file is written atomically: a failure leaves no partial
file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lme_bench.compare import CompareError, Comparison, build_comparison
from lme_bench.report.compare_chart import render_png
from lme_bench.report.compare_render import (
    comparison_chart,
    render_html,
    render_json,
    render_markdown,
)
from lme_bench.results.atomic import write_atomically, write_text_atomically

__all__ = ["CompareError", "CompareOutput", "compare_runs"]


@dataclass(frozen=True, slots=True)
class CompareOutput:
    comparison: Comparison
    markdown: str
    paths: list[Path]  # .md, .json, .html, .png


def _file_stem(run_a: str, run_b: str) -> str:
    def safe(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", name)

    return f"compare-{safe(run_a)}-vs-{safe(run_b)}"


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
