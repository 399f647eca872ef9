"""A series' history in words: the listing `lme-bench history` prints (a Markdown table, newest
run first), the trend charts history.html and the UI's `history-<series>` artifact show, and the
list of a results folder's series. The data come from lme_bench.results.history."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lme_bench.report.history_chart import TrendChart, TrendPoint, shown
from lme_bench.report.labels import count, dollars
from lme_bench.results.history import History, HistoryRow, SeriesOverview
from lme_bench.results.history_figures import Figure, FigureKind, figure_kinds

Link = Callable[[HistoryRow], str | None]  # a run's report.html as the page links it


def artifact_key(series: str) -> str:
    """`history-<series>` in lowercase letters, digits and dashes (a Prefect artifact key)."""
    slug = re.sub(r"[^a-z0-9]+", "-", series.lower()).strip("-")
    return f"history-{slug or 'series'}"


def run_date(row: HistoryRow) -> str:
    """The run's start, `2026-12-02 01:20` (UTC as the manifest records it)."""
    started = row.run.started_at or ""
    return started[:16].replace("T", " ") or "-"


def figure_cell(figure: Figure | None, kind: FigureKind) -> str:
    """`41.2% [30.0%, 52.9%]`: the figure and its 95% interval; `-` where the run has none."""
    if figure is None or figure.value is None:
        return "-"
    text = shown(figure.value, kind.percent)
    if figure.ci95 is not None:
        low, high = figure.ci95
        text += f" [{shown(low, kind.percent)}, {shown(high, kind.percent)}]"
    return text


def shown_figures(history: History) -> list[FigureKind]:
    """The headline figures some run of the series has, in `figure_kinds`' order."""
    return [k for k in figure_kinds() if any(k.key in row.figures for row in history.rows)]


def change_words(row: HistoryRow) -> list[str]:
    """What changed since the run before: what breaks the trend first, then the settings."""
    breaks = [*row.ground, *([row.judge_change] if row.judge_change else [])]
    return [f"**{reason}**" for reason in breaks] + row.changes


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def history_markdown(history: History, link: Link | None = None) -> str:
    """The series' runs as a Markdown table, newest first; with `link`, each run id links its
    report.html."""
    kinds = shown_figures(history)
    header = ["run", "date", "code", "changed since the run before"]
    header += [k.title for k in kinds] + ["cost", "failed", "empty memories"]
    lines = [
        f"# History of series {history.series}",
        "",
        f"{len(history.rows)} run(s) in {history.results_dir}, newest first; figures with their"
        " 95% intervals; **bold**: the trend breaks there (another benchmark, dataset file or"
        " judge).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i < 4 else "---:" for i in range(len(header))) + "|",
    ]
    for row in history.rows:
        target = link(row) if link is not None else None
        run = f"[{row.run.run_id}]({target})" if target else row.run.run_id
        changes = "; ".join(change_words(row)) or ("first run" if row is history.rows[-1] else "-")
        cells = [run, run_date(row), row.code_version or "-", changes]
        cells += [figure_cell(row.figures.get(k.key), k) for k in kinds]
        empty = "-" if row.empty_memories is None else count(row.empty_memories)
        cells += [dollars(row.cost), count(row.failed), empty]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def overview_markdown(results_dir: Path, found: list[SeriesOverview]) -> str:
    """The series of a results folder: runs and latest run of each."""
    lines = [
        f"# Series in {results_dir}",
        "",
        "`lme-bench history SERIES` lists one's runs.",
        "",
        "| series | runs | latest run | its date |",
        "|---|---:|---|---|",
    ]
    for item in found:
        date = (item.latest.started_at or "-")[:16].replace("T", " ")
        lines.append(f"| {item.series} | {item.runs} | {item.latest.run_id} | {date} |")
    return "\n".join(lines) + "\n"


def trend_charts(history: History, link: Link | None = None) -> list[TrendChart]:
    """One chart per headline figure some run has, its runs oldest first; breaks where the
    benchmark or dataset file changed, and, for a judge's figures, the judge."""
    rows = history.rows[::-1]
    charts = []
    for kind in shown_figures(history):
        points = [
            TrendPoint(
                row.run.run_id,
                run_date(row)[:10],
                row.figures.get(kind.key),
                link(row) if link is not None else None,
            )
            for row in rows
        ]
        breaks = {}
        for i, row in enumerate(rows[1:], start=1):
            reasons = [
                *row.ground,
                *([row.judge_change] if kind.judged and row.judge_change else []),
            ]
            if reasons:
                breaks[i] = reasons
        charts.append(TrendChart(kind.title, kind.percent, points, breaks))
    return charts
