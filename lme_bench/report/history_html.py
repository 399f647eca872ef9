"""history.html: a series' runs as a table and one trend chart per headline figure, each point
linking its run's report.html by a relative link, written atomically into the series' folder
of the results folder, `<results_dir>/series/<series>/history.html` (a results folder may hold
several series; their pages stay apart). One self-contained file: inline SVG, no scripts."""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from urllib.parse import quote

from lme_bench.report.history import (
    Link,
    change_words,
    figure_cell,
    run_date,
    shown_figures,
    trend_charts,
)
from lme_bench.report.history_chart import trend_svg
from lme_bench.report.labels import count, dollars
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.history import History, HistoryRow

PAGE_NAME = "history.html"
SERIES_FOLDER = "series"

_STYLE = """
body{font-family:sans-serif;margin:1.5em;max-width:90em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top;font-size:.9em}
td.n{text-align:right;white-space:nowrap}
figure{margin:1em 0 2em}
.breaks{color:#b00020;font-size:.9em}
"""


def history_page(results_dir: Path, series: str) -> Path:
    """Where a series' history.html goes."""
    return results_dir / SERIES_FOLDER / series / PAGE_NAME


def relative_link(page: Path) -> Link:
    """Each run's report.html relative to `page` (None where the run wrote none)."""

    def link(row: HistoryRow) -> str | None:
        if row.report is None:
            return None
        path = os.path.relpath(row.report.resolve(), page.parent.resolve())
        return quote(Path(path).as_posix())

    return link


def _table(history: History, link: Link) -> str:
    kinds = shown_figures(history)
    header = ["run", "date", "code", "changed since the run before"]
    header += [k.title for k in kinds] + ["cost", "failed", "empty memories"]
    rows = []
    for row in history.rows:
        target = link(row)
        run = escape(row.run.run_id)
        cells = [f'<a href="{escape(target)}">{run}</a>' if target else run]
        words = [escape(w).replace("**", "") for w in change_words(row)]
        breaks = len(row.ground) + bool(row.judge_change)
        shown = [f"<b>{w}</b>" if i < breaks else w for i, w in enumerate(words)]
        cells += [escape(run_date(row)), escape(row.code_version or "-"), "<br>".join(shown) or "-"]
        numbers = [figure_cell(row.figures.get(k.key), k) for k in kinds]
        empty = "-" if row.empty_memories is None else count(row.empty_memories)
        numbers += [dollars(row.cost), count(row.failed), empty]
        rows.append(
            "<tr>"
            + "".join(f"<td>{c}</td>" for c in cells)
            + "".join(f'<td class="n">{escape(n)}</td>' for n in numbers)
            + "</tr>"
        )
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def history_html(history: History, link: Link) -> str:
    """The page: the runs, newest first, then a trend chart per headline figure."""
    title = f"History of series {history.series}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<p>{len(history.rows)} run(s) in {escape(str(history.results_dir))}, newest first;"
        " figures with their 95% intervals. In bold, and as a dashed marker on the charts: the"
        " trend breaks there (another benchmark, dataset file or judge); no line joins runs"
        " across it. Each point links its run's report.</p>",
        _table(history, link),
    ]
    for chart in trend_charts(history, link):
        notes = "; ".join(
            f"before {chart.points[i].run_id}: {', '.join(r)}" for i, r in chart.breaks.items()
        )
        caption = f'<figcaption class="breaks">line broken {escape(notes)}</figcaption>'
        body.append(f'<figure class="trend">{trend_svg(chart)}{caption if notes else ""}</figure>')
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )


def write_history_html(history: History) -> Path:
    """history.html of the series, atomically; its path."""
    page = history_page(history.results_dir, history.series)
    page.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(page, history_html(history, relative_link(page)))
    return page
