"""The Prefect UI's `history-<series>` artifact of a run: its series' trend charts (inline SVG
data URIs, which the UI's Markdown renders as images, so no file server is needed), a link to
history.html, and the runs' table (split to fit the artifact page), each run linking its
report.html (under `[run] link_base` when set, file:// otherwise). history.html is written
beside, as `lme-bench history --html` writes it, and copied to the results URL of a run kept
at one."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from lme_bench.report.history import artifact_key, history_markdown, trend_charts
from lme_bench.report.history_chart import trend_svg
from lme_bench.report.history_html import write_history_html
from lme_bench.report.ui_markdown import file_link
from lme_bench.report.ui_tables import split_wide_tables
from lme_bench.results.history import HistoryRow, series_history
from lme_bench.results.run_mirror import publish_files
from lme_bench.results.series_runs import read_series_run


@dataclass(frozen=True)
class HistoryArtifact:
    key: str
    markdown: str
    page: Path  # history.html


def _svg_image(title: str, svg: str) -> str:
    data = base64.b64encode(svg.encode()).decode()
    return f"![{title}](data:image/svg+xml;base64,{data})"


def history_artifact(
    run_dir: Path, link_base: str | None = None, results_url: str | None = None
) -> HistoryArtifact:
    """The artifact of the series `run_dir`'s run belongs to (HistoryError: no such run)."""
    results_dir = run_dir.parent
    run = read_series_run(run_dir)
    history = series_history(results_dir, run.series if run is not None else None)
    page = write_history_html(history)
    publish_files(results_url, results_dir, [page])

    def link(row: HistoryRow) -> str | None:
        return file_link(row.report, results_dir, link_base) if row.report else None

    parts = [
        f"**[history.html]({file_link(page, results_dir, link_base)})**: the trend charts with"
        " every point linking its run's report.",
        "",
    ]
    for chart in trend_charts(history):
        parts += [_svg_image(f"trend of {chart.title}", trend_svg(chart)), ""]
    parts.append(split_wide_tables(history_markdown(history, link)))
    return HistoryArtifact(artifact_key(history.series), "\n".join(parts), page)
