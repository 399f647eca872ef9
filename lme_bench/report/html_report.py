"""report.html: a run as one self-contained page a person reads from a file:// URL (no server,
no external scripts, fonts or stylesheets). Per-type tables, a chart with 95% intervals, cost,
then every question (see html_questions.py), with filters: wrong answers, failed questions,
one question type. The page applies a filter named in its address on load, e.g.
`report.html#filter=wrong&type=multi-session` (`filter` takes `wrong`, `failed` or both,
comma-separated)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import DEFAULT_BENCHMARK, ReportTable, report_hooks_of
from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.dataset.shards import QuestionRef
from lme_bench.report.cost import cost_rows, own_calls_words
from lme_bench.report.figure_rows import (
    ACCURACY_HEADER,
    RETRIEVAL_HEADER,
    accuracy_cells,
    accuracy_groups,
    retrieval_rows,
)
from lme_bench.report.html_chart import Bar, bars_svg
from lme_bench.report.html_memory import context_unchanged_text
from lme_bench.report.html_questions import QuestionView, question_card, question_view
from lme_bench.report.ingest import empty_memory_text, ingested_words
from lme_bench.report.judge_profile import successor_facts
from lme_bench.report.labels import (
    MODES,
    attribution,
    count,
    counted,
    informative,
    interval,
    label,
    metric_label,
    percent,
    seconds,
    small_sample,
    words,
)
from lme_bench.report.provenance_check import name_check_line, unverified_text
from lme_bench.report.qa import INTERVALS_NOTE
from lme_bench.report.regression import baseline_html
from lme_bench.report.run_facts import run_facts
from lme_bench.report.summary import (
    memory_facts,
    not_applicable_lines,
    system_calls_words,
)
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.summary import not_applicable
from lme_bench.retrieval.official_ids import RetrievalRow

REPORT_NAME = "report.html"

_STYLE = """
body{font-family:sans-serif;margin:1.5em;max-width:75em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
section.q{border:1px solid #ccc;border-left:6px solid #9c9;margin:.8em 0;padding:.2em .8em}
section.q.is-wrong{border-left-color:#d55}
section.q.is-failed{border-left-color:#e90}
dt{font-weight:bold;float:left;clear:left;width:14em}
dd{margin-left:15em}
.right{color:#282}.wrong{color:#b22}.none{color:#888}
li.evidence{background:#fff3c4}
.filters{position:sticky;top:0;background:#f4f4f4;padding:.5em;border:1px solid #ccc}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.flag{background:#fff3c4;border:1px solid #e0c060;border-radius:3px;padding:0 4px;
font-size:.85em;white-space:nowrap}
table.facts th{background:#f4f4f4;font-weight:normal;width:16em}
pre.memory{white-space:pre-wrap;background:#f8f8f8;margin:.2em 0;padding:.3em}
"""

_SCRIPT = """
function apply(){
  var wrong=document.getElementById('f-wrong').checked;
  var failed=document.getElementById('f-failed').checked;
  var type=document.getElementById('f-type').value;
  var shown=0;
  document.querySelectorAll('section.q').forEach(function(q){
    var keep=(!wrong||q.dataset.wrong==='1')&&(!failed||q.dataset.failed==='1')
      &&(!type||q.dataset.type===type);
    q.hidden=!keep;
    if(keep){shown++;}
  });
  document.getElementById('shown').textContent=String(shown);
}
function fromAddress(){
  var params=new URLSearchParams(location.hash.slice(1));
  var named=(params.get('filter')||'').split(',');
  document.getElementById('f-wrong').checked=named.indexOf('wrong')>=0;
  document.getElementById('f-failed').checked=named.indexOf('failed')>=0;
  document.getElementById('f-type').value=params.get('type')||'';
  apply();
}
document.querySelectorAll('.filters input,.filters select').forEach(function(e){
  e.addEventListener('change',apply);
});
window.addEventListener('hashchange',fromAddress);
fromAddress();
"""


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] | None = None
) -> str:
    """A table of already-escaped cells; the `numeric` columns (default: all but the first)
    are right-aligned."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{c}</td>' if (i in numeric if numeric else i > 0) else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _facts(rows: Sequence[tuple[str, str]]) -> str:
    """Label and value pairs (values escaped here) as a two-column table."""
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="facts">{body}</table>'


def _interval_cell(ci: Sequence[float] | None, n: int) -> str:
    text, flag = interval(ci, n)
    return escape(text) + (f' <span class="flag">{escape(flag)}</span>' if flag else "")


def _accuracy_rows(judge: dict[str, Any]) -> list[list[str]]:
    return [
        [escape(cell) for cell in accuracy_cells(name, acc)]
        + [_interval_cell(acc.get("ci95"), acc["n"])]
        for name, acc in accuracy_groups(judge)
    ]


def _qa_section(qa: dict[str, Any]) -> str:
    answers = qa["answers"]
    parts = [
        "<h2>Question answering</h2>",
        f"<p>{count(answers['answered'])} of {count(answers['questions'])} questions answered "
        f"({count(answers['failed'])} failed). Official rule: a judge reply without "
        '"yes" is a wrong answer; abstention questions count in their type and again in the '
        f"abstention row. {escape(INTERVALS_NOTE).replace('`', '')}</p>",
    ]
    for name, judge in qa["judges"].items():
        kind = "LLM judge" if judge["kind"] == "llm" else "no-LLM fallback (not comparable)"
        notes = [f"{judge['not_judged']} question(s) without a verdict (left out)"]
        if "unreadable" in judge:
            notes.append(f"{judge['unreadable']} replies holding no yes or no word")
        causes = ", ".join(
            f"{attribution(k)} {count(v)}" for k, v in sorted(judge["attribution"].items())
        )
        parts += [
            f"<h3>{escape(kind)}: {escape(name)}</h3>",
            _table(ACCURACY_HEADER, _accuracy_rows(judge), numeric=(1, 2)),
            f"<p>{escape('; '.join(notes))}. Attribution: {escape(causes) or 'none'}.</p>",
        ]
        profiled = qa.get("judge_profile")
        if profiled is not None and profiled["judge"] == name:
            parts += [
                "<p><strong>Judged by a successor judge</strong>:</p>",
                _facts(successor_facts(profiled)),
                f"<p>The estimate is {escape(profiled['estimate']['note'])}.</p>",
            ]
    return "".join(parts)


def _benchmark_section(summary: dict[str, Any]) -> str:
    """The run's benchmark's own figures (its report hooks' section), official first."""
    benchmark = summary.get("benchmark", DEFAULT_BENCHMARK)
    hooks = report_hooks_of(benchmark, summary.get("benchmark_source"))
    section = summary.get(benchmark)
    if not section or hooks.html_section is None:
        return ""
    found: ReportTable = hooks.call("html_section", section)
    cells = [[escape(c) for c in row] for row in found.rows]
    table = _table(found.header, cells) if cells else ""
    return f"<h2>{escape(found.title)}</h2><p>{escape(found.words)}</p>" + table


def _verdicts_label(summary: dict[str, Any]) -> str | None:
    """What the verdict accuracy is when the benchmark's own figures are the official ones."""
    benchmark = summary.get("benchmark", DEFAULT_BENCHMARK)
    if not summary.get(benchmark):
        return None
    return report_hooks_of(benchmark, summary.get("benchmark_source")).verdicts_label


def _chart(summary: dict[str, Any], primary: str | None) -> str:
    if primary is not None:
        judge = summary["qa"]["judges"][primary]
        bars = [
            Bar(t, a["accuracy"], _whisker(a.get("ci95")), a["n"])
            for t, a in [*judge["per_type"].items(), ("abstention", judge["abstention"])]
        ]
        small = any(small_sample(b.n) for b in bars)
        note = " (small samples: few questions a type)" if small else ""
        label = _verdicts_label(summary)
        if label is not None:
            note += f" ({label})"
        return bars_svg(f"QA accuracy per question type ({primary}), 95% intervals{note}", bars)
    by_type = summary["session"]["by_type"]
    bars = [Bar(t, g.get("recall_any@5"), None, g["n"]) for t, g in by_type.items()]
    return bars_svg(f"Session {metric_label('recall_any@5')} per question type", bars)


def _whisker(ci: Sequence[float] | None) -> tuple[float, float] | None:
    """An interval worth drawing: none where its ends meet (it shows no uncertainty)."""
    return (ci[0], ci[1]) if ci is not None and informative(ci, percent) else None


def _retrieval_section(summary: dict[str, Any]) -> str:
    parts = ["<h2>Retrieval</h2>"]
    for granularity in ("session", "turn"):
        part = summary[granularity]
        if not part["questions"]:
            continue
        parts.append(f"<h3>{granularity} granularity</h3>")
        checked = name_check_line(part, granularity)
        lines = [*([checked] if checked else []), *not_applicable_lines(part)]
        parts += [f"<p>{escape(line)}</p>" for line in lines]
        if not_applicable(part):
            parts.append("<p>No figures: retrieval is not applicable to any question.</p>")
            continue
        rows = [[escape(c) for c in row] for row in retrieval_rows(summary, granularity)]
        parts.append(_table(RETRIEVAL_HEADER, rows))
    parts.append(f"<p>{_code(summary['note'])}</p>")
    return "".join(parts)


def _code(text: str) -> str:
    """Escaped text with `quoted` names set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


# Shown only when not zero: retries by cause, caps and timeouts, the memory agent's own counts.
_QUIET_WHEN_ZERO = frozenset(
    {
        "retries_throttled",
        "retries_timeout",
        "retries_connection",
        "retries_server",
        "capped_replies",
        "timeouts",
        "dropped_tool_calls",
        "resumed_sessions",
        "unfinished_sessions",
    }
)
_AGENT_ONLY = frozenset({"llm_calls_per_turn", "input_tokens", "output_tokens", "tool_calls"})


def _ingestion_rows(ingestion: dict[str, Any]) -> list[tuple[str, str]]:
    """The ingestion totals worth a line, in words, with formatted numbers: zero counts of
    rare events and the memory agent's figures in a run without one are left out."""
    rows = []
    for key, value in ingestion.items():
        if key in _QUIET_WHEN_ZERO and not value:
            continue
        if key in _AGENT_ONLY and not ingestion.get("llm_calls"):
            continue
        if key == "modes":
            rows.append((label(key), words(value, MODES)))
        elif key == "seconds":
            summed = f"ingestion time, summed over {ingested_words(ingestion)}"
            rows.append((summed, seconds(value)))
        elif key == "llm_calls_per_turn":
            rows.append((label(key), "-" if value is None else f"{value:.2f}"))
        elif isinstance(value, dict):
            if value:
                rows.append((label(key), counted(value)))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            rows.append((label(key), count(value)))
    return rows


def _cost_section(summary: dict[str, Any]) -> str:
    """The run's calls and what they cost: the memory agent's, the memory system's own, the
    QA model's and the judges', then the money by part."""
    parts = []
    ingestion = _ingestion_rows(summary.get("ingestion") or {})
    if ingestion:
        parts += ["<h3>Ingestion</h3>", _facts(ingestion)]
    parts += [
        "<h3>The memory system's own calls</h3>",
        f"<p>{escape(system_calls_words(summary.get('memory_system')))}.</p>",
    ]
    cost = summary.get("cost")
    if cost:
        rows = [(name, value) for name, value in cost_rows(cost)]
        if own_calls_words(cost):
            rows.append(("the memory system's own model calls", own_calls_words(cost)))
        if cost.get("unpriced_models"):
            rows.append(("no price for (left out)", ", ".join(cost["unpriced_models"])))
        parts += ["<h3>Cost (from [prices])</h3>", _facts(rows)]
    return "<h2>Calls and cost</h2>" + "".join(parts)


def _about(summary: dict[str, Any], views: Sequence[QuestionView], primary: str | None) -> str:
    """What the run was: the memory system, its search and how fast, how it was fed, which
    model answered and who judged."""
    facts = [*run_facts(summary), *memory_facts(summary)]
    modes = (summary.get("ingestion") or {}).get("modes")
    if modes:
        facts.insert(len(run_facts(summary)) + 1, ("ingestion", words(modes, MODES)))
    models = sorted({v.hypothesis.qa_model for v in views if v.hypothesis is not None})
    if models:
        facts.append(("answering model", words(models)))
    if primary is not None:
        facts.append(("primary judge", primary))
    return "<h2>What ran</h2>" + _facts(facts)


def _filters(types: Sequence[str], total: int) -> str:
    options = "".join(f'<option value="{escape(t)}">{escape(t)}</option>' for t in types)
    return (
        '<div class="filters">Show: <label><input type="checkbox" id="f-wrong"> wrong answers'
        '</label> <label><input type="checkbox" id="f-failed"> failed questions</label> '
        f'<select id="f-type"><option value="">every type</option>{options}</select> '
        f'— <span id="shown">{total}</span> of {total} questions</div>'
    )


def render_report(
    title: str, summary: dict[str, Any], views: Sequence[QuestionView], primary: str | None
) -> str:
    types = [t for t in QUESTION_TYPES if any(v.asked.question_type == t for v in views)]
    incomplete = summary.get("incomplete") or {}
    banner = ""
    if incomplete.get("failed"):
        banner = (
            f'<p class="wrong"><b>Incomplete run</b>: {incomplete["failed"]} question(s) failed; '
            "the figures leave them out.</p>"
        )
    answers = summary.get("answers_file") or {}
    if answers.get("missing"):
        shown = ", ".join(answers["missing_ids"][:20]) + (" …" if answers["missing"] > 20 else "")
        banner += (
            f'<p class="wrong" id="missing-answers"><b>Missing answers</b>: {answers["missing"]}'
            f" question(s) of the dataset have no answer in {escape(answers['name'])}"
            f" ({escape(shown)}); the figures are over the {answers['answered']} answered"
            " only.</p>"
        )
    health = summary.get("memory_health") or {}
    empty = empty_memory_text(health)
    if empty:
        banner += (
            f'<p class="wrong" id="memory-empty"><b>Empty memory</b>: {escape(empty)}. Empty: '
            f"{escape(health['rule'])}.</p>"
        )
    unchanged = context_unchanged_text(health)
    if unchanged:
        part = health["context_unchanged"]
        banner += (
            f'<p class="wrong" id="context-unchanged"><b>Context never updated</b>: '
            f"{escape(unchanged)}. Flagged: {escape(part['rule'])}.</p>"
        )
    unverified = unverified_text(summary)
    if unverified:
        banner += (
            f'<p class="wrong" id="provenance-unverified"><b>Provenance unverified</b>: '
            f"{escape(unverified.removeprefix('provenance unverified: '))}; the retrieval"
            " figures rest on names the memory system was never given.</p>"
        )
    lead = summary.get("headline")
    body = [
        f"<h1>{escape(title)}</h1>",
        baseline_html(summary.get("baseline")),  # a regression first
        banner,
        f'<p id="headline"><b>Headline</b>: {escape(lead)}.</p>' if lead else "",
        _about(summary, views, primary),
        _chart(summary, primary),
        _benchmark_section(summary) + "\n",  # the blank line the page had before
        _qa_section(summary["qa"]) if summary.get("qa") else "",
        _retrieval_section(summary),
        _cost_section(summary),
        "<h2>Questions</h2>",
        _filters(types, len(views)),
        *(question_card(v) for v in views),
    ]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "\n".join(body)
        + f"<script>{_SCRIPT}</script></body></html>\n"
    )


def _judge_order(scores: Sequence[ScoreRow]) -> list[str]:
    """LLM judges first, then by name: the order of summary.json's judges."""
    kinds = {s.judge: s.judge_kind for s in scores}
    return sorted(kinds, key=lambda name: (kinds[name] != "llm", name))


def write_html_report(
    run_dir: Path,
    title: str,
    summary: dict[str, Any],
    refs: Sequence[QuestionRef],
    retrieval: Sequence[RetrievalRow],
    hypotheses: Sequence[HypothesisRow],
    scores: Sequence[ScoreRow],
    failed: dict[str, str],
    excerpts: Mapping[str, Any] | None = None,
) -> Path:
    """Render the run's report.html (atomically) from its rows and the questions themselves;
    `excerpts`: by memory build, what its memory held after ingestion (memory_excerpts.json)."""
    judges = _judge_order(scores)
    by_hypothesis = {h.question_id: h for h in hypotheses}
    by_turns = {r.question_id: r for r in retrieval if r.granularity == "turn"}
    first = {(s.question_id, s.judge): s for s in scores if s.repeat == 0}
    health = summary.get("memory_health") or {}
    empty = set(health.get("question_ids") or ())
    unchanged = set((health.get("context_unchanged") or {}).get("question_ids") or ())
    held = excerpts or {}
    views = [
        question_view(
            ref.load(),
            by_hypothesis.get(ref.question_id),
            [first[(ref.question_id, j)] for j in judges if (ref.question_id, j) in first],
            by_turns.get(ref.question_id),
            failed.get(ref.question_id),
            ref.question_id in empty,
            (ref.build in held, held.get(ref.build)),
            ref.question_id in unchanged,
        )
        for ref in refs
    ]
    summarized = (summary.get("qa") or {}).get("judges", {})
    primary = judges[0] if judges and judges[0] in summarized else None
    path = run_dir / REPORT_NAME
    write_text_atomically(path, render_report(title, summary, views, primary))
    return path
