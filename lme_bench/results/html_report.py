"""report.html: a run as one self-contained page a person reads from a file:// URL (no server,
no external scripts, fonts or stylesheets). Per-type tables, a chart with 95% intervals, cost,
then every question (see html_questions.py), with filters: wrong answers, failed questions,
one question type. The page applies a filter named in its address on load, e.g.
`report.html#filter=wrong&type=multi-session` (`filter` takes `wrong`, `failed` or both,
comma-separated)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.dataset.shards import QuestionRef
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.html_chart import Bar, bars_svg
from lme_bench.results.html_questions import QuestionView, question_card, question_view
from lme_bench.results.ingest_table import empty_memory_text
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.summary import (
    SHOWN_METRICS,
    not_applicable,
    not_applicable_lines,
    summary_table,
)
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


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


_ACCURACY_HEADER = ("question type", "accuracy", "correct / judged", "95% CI")


def _accuracy_rows(judge: dict[str, Any]) -> list[list[str]]:
    named = [
        *judge["per_type"].items(),
        ("task-averaged", judge["task_averaged"]),
        ("overall", judge["overall"]),
        ("abstention", judge["abstention"]),
    ]
    rows = []
    for name, acc in named:
        ci = acc.get("ci95")
        interval = f"{_pct(ci[0])} to {_pct(ci[1])}" if ci else "-"
        counts = f"{acc['correct']} / {acc['n']}"
        rows.append([escape(name), _pct(acc["accuracy"]), counts, interval])
    return rows


def _qa_section(qa: dict[str, Any]) -> str:
    answers = qa["answers"]
    parts = [
        "<h2>Question answering</h2>",
        f"<p>{answers['answered']} of {answers['questions']} questions answered "
        f'({answers["failed"]} failed). Official rule: a judge reply without "yes" is a '
        "wrong answer; abstention questions count in their type and again in the abstention "
        "row; intervals: 95%, stratified bootstrap.</p>",
    ]
    for name, judge in qa["judges"].items():
        kind = "LLM judge" if judge["kind"] == "llm" else "no-LLM fallback (not comparable)"
        notes = [f"{judge['not_judged']} question(s) without a verdict (left out)"]
        if "unreadable" in judge:
            notes.append(f"{judge['unreadable']} replies holding no yes or no word")
        causes = ", ".join(f"{k} {v}" for k, v in sorted(judge["attribution"].items()))
        parts += [
            f"<h3>{escape(kind)}: {escape(name)}</h3>",
            _table(_ACCURACY_HEADER, _accuracy_rows(judge)),
            f"<p>{escape('; '.join(notes))}. Attribution: {escape(causes) or 'none'}.</p>",
        ]
    return "".join(parts)


def _chart(summary: dict[str, Any], primary: str | None) -> str:
    if primary is not None:
        judge = summary["qa"]["judges"][primary]
        bars = [
            Bar(t, a["accuracy"], tuple(a["ci95"]) if a.get("ci95") else None, a["n"])
            for t, a in [*judge["per_type"].items(), ("abstention", judge["abstention"])]
        ]
        return bars_svg(f"QA accuracy per question type ({primary}), 95% intervals", bars)
    by_type = summary["session"]["by_type"]
    bars = [Bar(t, g.get("recall_any@5"), None, g["n"]) for t, g in by_type.items()]
    return bars_svg("Session recall_any@5 per question type", bars)


def _retrieval_section(summary: dict[str, Any]) -> str:
    parts = ["<h2>Retrieval</h2>"]
    for granularity in ("session", "turn"):
        part = summary[granularity]
        if not part["questions"]:
            continue
        parts.append(f"<h3>{granularity} granularity</h3>")
        parts += [f"<p>{escape(line)}</p>" for line in not_applicable_lines(part)]
        if not_applicable(part):
            parts.append("<p>No figures: retrieval is not applicable to any question.</p>")
            continue
        rows = [
            [escape(r["question_type"]), str(r["n"])]
            + ["-" if r[m] is None else f"{r[m]:.3f}" for m in SHOWN_METRICS]
            for r in summary_table(summary, granularity)
        ]
        parts.append(_table(["question type", "n", *SHOWN_METRICS], rows))
    parts.append(f"<p>{escape(summary['note'])}</p>")
    return "".join(parts)


_COST_PARTS = ("ingestion", "answering", "judging", "total", "per_question", "per_correct_answer")


def _cost_section(summary: dict[str, Any]) -> str:
    cost = summary.get("cost")
    ingestion = summary.get("ingestion") or {}
    rows = [[escape(k), escape(str(v))] for k, v in ingestion.items() if not isinstance(v, dict)]
    if cost:
        rows += [
            [f"cost: {part.replace('_', ' ')}", "-" if value is None else f"{value:.5f}"]
            for part in _COST_PARTS
            if part in cost and ((value := cost[part]) is not None or part != "per_correct_answer")
        ]
        if cost.get("unpriced_models"):
            rows.append(["no price for", escape(", ".join(cost["unpriced_models"]))])
    return "<h2>Ingestion and cost</h2>" + _table(["", "value"], rows) if rows else ""


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
    health = summary.get("memory_health") or {}
    empty = empty_memory_text(health)
    if empty:
        banner += (
            f'<p class="wrong" id="memory-empty"><b>Empty memory</b>: {escape(empty)}. Empty: '
            f"{escape(health['rule'])}.</p>"
        )
    body = [
        f"<h1>{escape(title)}</h1>",
        banner,
        _chart(summary, primary),
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
) -> Path:
    """Render the run's report.html (atomically) from its rows and the questions themselves."""
    judges = _judge_order(scores)
    by_hypothesis = {h.question_id: h for h in hypotheses}
    by_turns = {r.question_id: r for r in retrieval if r.granularity == "turn"}
    first = {(s.question_id, s.judge): s for s in scores if s.repeat == 0}
    empty = set((summary.get("memory_health") or {}).get("question_ids") or ())
    views = [
        question_view(
            ref.load(),
            by_hypothesis.get(ref.question_id),
            [first[(ref.question_id, j)] for j in judges if (ref.question_id, j) in first],
            by_turns.get(ref.question_id),
            failed.get(ref.question_id),
            ref.question_id in empty,
        )
        for ref in refs
    ]
    summarized = (summary.get("qa") or {}).get("judges", {})
    primary = judges[0] if judges and judges[0] in summarized else None
    path = run_dir / REPORT_NAME
    write_text_atomically(path, render_report(title, summary, views, primary))
    return path
