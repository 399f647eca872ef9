"""The leaderboard page: one self-contained HTML file (its style and its sorting script inline,
nothing fetched), a table per benchmark, dataset file and judge."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from lme_bench.publish.leaderboard_rows import Figure, Row
from lme_bench.publish.leaderboard_tables import Table
from lme_bench.report.labels import count, dollars, percent, seconds


@dataclass(frozen=True)
class Column:
    name: str  # data-col: what the page's script and its tests find a column by
    header: str
    title: str  # the header's tooltip: what the figure is
    value: Callable[[Row], float | str | None]  # what the column sorts by
    cell: Callable[[Row], str]  # the cell's HTML
    descending: bool = True  # the first click sorts the largest first
    number: bool = True  # sorted as numbers, else as text


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _accuracy(figure: Figure | None) -> str:
    if figure is None or figure.value is None:
        return "-"
    shown = f'<span class="v">{percent(figure.value)}</span>'
    if figure.label is not None:
        shown = f'<span class="label">{_e(figure.label)}</span> {shown}'
    if figure.ci95 is not None:
        low, high = figure.ci95
        shown += f' <span class="ci">[{percent(low)}, {percent(high)}]</span>'
    if figure.correct is not None and figure.n is not None:
        shown += f' <span class="n">{count(figure.correct)}/{count(figure.n)}</span>'
    return shown


def _value(figure: Figure | None) -> float | None:
    return figure.value if figure is not None else None


def _system(row: Row) -> str:
    digest = _e(row.settings_digest or "-")
    return (
        f'<span class="v">{_e(row.system)}</span><br><span class="n">settings {digest}'
        f" · run: {_e(row.run_id)}</span>"
    )


def _verified(row: Row) -> str:
    said = "verified" if row.verified else "not verified"
    lines = [f"<li>FAILED: {_e(p)}</li>" for p in row.problems]
    lines += [f"<li>ok: {_e(c)}</li>" for c in row.checked]
    return (
        f'<span class="v {"ok" if row.verified else "bad"}">{said}</span>'
        f"<details><summary>checks</summary><ul>{''.join(lines)}</ul></details>"
    )


def _signer(row: Row) -> str:
    if row.signer is None:
        return '<span class="n">unsigned</span>' if row.verified else "-"
    return f'<code title="{_e(row.signer)}">{_e(row.signer[:16])}…</code>'


def _report(row: Row) -> str:
    if row.report is None:
        return "-"
    return f'<a href="{_e(quote(row.report))}">report</a>'


def _estimate(row: Row) -> str:
    if row.estimate is None:
        return "-"
    whose = f"{row.reference_judge}'s" if row.reference_judge else "the reference judge's"
    return (
        f'<span class="estimate" title="not official: an estimate of {_e(whose)} figure from'
        f' a successor judge and its profile">est. {_accuracy(row.estimate)}</span>'
    )


COLUMNS: tuple[Column, ...] = (
    Column("system", "system", "memory system (search) and its settings digest",
           lambda r: r.system, _system, descending=False, number=False),
    Column("questions", "n", "questions in the run", lambda r: r.questions,
           lambda r: count(r.questions)),
    Column("overall", "QA overall", "the judge's overall accuracy, 95% interval, correct/n",
           lambda r: _value(r.overall), lambda r: _accuracy(r.overall)),
    Column("task_averaged", "QA task-averaged", "mean of the per-type accuracies, 95% interval",
           lambda r: _value(r.task_averaged), lambda r: _accuracy(r.task_averaged)),
    Column("recall", "session recall_all@5", "official average over non-abstention questions",
           lambda r: r.session_recall_all_5,
           lambda r: "-" if r.session_recall_all_5 is None else f"{r.session_recall_all_5:.3f}"),
    Column("latency", "search p50", "median search latency of the memory system",
           lambda r: r.search_p50_s, lambda r: seconds(r.search_p50_s), descending=False),
    Column("context", "context tokens / question", "the reader's input tokens per answer",
           lambda r: r.context_tokens,
           lambda r: "-" if r.context_tokens is None else f"{r.context_tokens:,.0f}",
           descending=False),
    Column("cost", "cost / question", "from the run's [prices]; total in the tooltip",
           lambda r: r.cost_per_question,
           lambda r: f'<span title="run total {dollars(r.cost_total)}">'
           f"{dollars(r.cost_per_question)}</span>", descending=False),
    Column("verified", "verified", "lme-bench verify on the bundle: its checks",
           lambda r: int(r.verified), _verified),
    Column("signer", "signer", "fingerprint of the Ed25519 key that signed BUNDLE.json",
           lambda r: r.signer or "", _signer, descending=False, number=False),
    Column("report", "report", "the run's report.html, from the bundle",
           lambda r: r.bundle, _report, descending=False, number=False),
)  # fmt: skip
ESTIMATE = Column(
    "estimate",
    "estimated official figure (not official)",
    "a successor judge's estimate of the reference judge's overall accuracy, corrected through"
    " its judge profile: an estimate, never the official figure",
    lambda r: _value(r.estimate),
    _estimate,
)


def columns_of(table: Table) -> Sequence[Column]:
    if not table.estimated:
        return COLUMNS
    return (*COLUMNS[:3], ESTIMATE, *COLUMNS[3:])


def _sort_value(value: float | str | None) -> str:
    if value is None:
        return ""
    return repr(float(value)) if not isinstance(value, str) else value


def _heading(table: Table) -> str:
    key = table.key
    prompts = f"prompts {table.prompt_version}, " if table.prompt_version else ""
    return (
        f"<h2>{_e(key.benchmark)} · {_e(table.dataset_name or 'dataset')}"
        f" · judged by {_e(key.judge)}</h2>"
        f'<p class="key">dataset sha256 <code>{_e(key.dataset_sha256)}</code>; {_e(prompts)}'
        f"prompt digest <code>{_e(key.prompt_digest[:16] or '-')}</code></p>"
    )


UNVERIFIED = ' class="unverified"'


def table_html(table: Table, index: int) -> str:
    columns = columns_of(table)
    head = "".join(
        f'<th data-col="{c.name}" data-first="{"desc" if c.descending else "asc"}"'
        f' data-kind="{"number" if c.number else "text"}" aria-sort="none"'
        f' title="{_e(c.title)}"><button type="button">{_e(c.header)}</button></th>'
        for c in columns
    )
    body = "".join(
        f'<tr data-bundle="{_e(row.bundle)}"{"" if row.verified else UNVERIFIED}>'
        + "".join(
            f'<td data-col="{c.name}" data-value="{_e(_sort_value(c.value(row)))}">'
            f"{c.cell(row)}</td>"
            for c in columns
        )
        + "</tr>"
        for row in table.rows
    )
    return (
        f'<section class="board" id="table-{index}">{_heading(table)}<div class="scroll">'
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></section>"
    )
