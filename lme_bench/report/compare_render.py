"""A comparison as Markdown, JSON and self-contained HTML (the tables plus the inline SVG chart).

Markdown and HTML are rendered from the same sections, so they always show the same figures; the
JSON holds every figure unrounded (accuracies and deltas as fractions, not percent).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html import escape
from typing import Any

from lme_bench.benchmarks.report_hooks import NO_HOOKS, ReportHooks, report_hooks_of
from lme_bench.compare.comparison import Comparison, QaPart
from lme_bench.compare.load import RETRIEVAL_METRICS, JudgeLabels
from lme_bench.compare.paired import (
    Flip,
    Interval,
    MetricComparison,
    PairedDelta,
    Row,
)
from lme_bench.metrics.qa import Accuracy
from lme_bench.report.compare_chart import BarChart, BarGroup, chart, render_svg
from lme_bench.report.compare_official import official_chart, official_json, official_table
from lme_bench.report.labels import SMALL_SAMPLE, digest_words, small_sample

AVERAGES_NOTE = (
    "Accuracy A and B: each run on its own judged questions. Δ B-A and its interval: over the "
    "questions judged in both runs (paired n; 'paired A → B' shows both accuracies there). "
    "Per-type rows count `_abs` questions inside their base type. Task-averaged: the plain mean "
    "of the per-type accuracies (each type weighs the same). Overall: the mean over all judged "
    "questions (each question weighs the same). Abstention: the mean over abstention questions"
    " only (`_abs` ids; LoCoMo's adversarial ones)."
)
BOOTSTRAP_NOTE = (
    "95% interval: paired percentile bootstrap over the questions judged in both runs, resampled "
    "with replacement within each question type ({resamples} resamples, seed {seed}); the "
    "task-averaged Δ is recomputed in each resample from the per-type means. Under 30 paired "
    "questions an interval is flagged `small sample`; `no spread` means every resample gave "
    "the same Δ (as with one question per type), which says nothing about the uncertainty."
)
JUDGING_NOTE = (
    "A question's label is its judge's first judgment by the official rule (a reply without "
    '"yes" is wrong); a question without one (a failed answer or judge call) is not judged '
    "(left out of every mean)."
)
RETRIEVAL_NOTE = (
    "Retrieval: means over the questions with status ok in both runs (each question counts "
    "once), under two averages: the official printer's (every non-abstention question; the "
    "headline) and run_retrieval.py's (also without the questions that have no evidence in user "
    "turns). recall_any@k: some evidence in the top k; recall_all@k: all of it; ndcg_any@k: "
    "binary-relevance nDCG. 95% interval: paired percentile bootstrap over those questions, "
    "stratified by question type ({resamples} resamples, seed {seed})."
)
HEADLINE_AVERAGE = "official printer (skip `_abs`)"
USER_EVIDENCE_AVERAGE = "run_retrieval.py (also skip no user-turn evidence)"
ROW_LABELS = {
    "task-averaged": "task-averaged (mean of per-type accuracies)",
    "overall": "overall (mean over all judged questions)",
    "abstention": "abstention (`_abs` or adversarial questions only)",
}


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    numeric_from: int = 1  # columns from this index on hold numbers (right-aligned)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _signed(value: float, percent: bool) -> str:
    return f"{100 * value:+.1f}" if percent else f"{value:+.3f}"


def _delta(value: float | None, percent: bool = True) -> str:
    return "-" if value is None else _signed(value, percent) + (" pp" if percent else "")


def _ci(ci: Interval | None, n: int, percent: bool = True) -> str:
    """The interval of a delta: "no spread" when its ends are equal once rounded (every
    resample gave the same delta), flagged as a small sample under SMALL_SAMPLE_N questions."""
    if ci is None:
        return "-"
    low, high = _signed(ci[0], percent), _signed(ci[1], percent)
    flag = f"{SMALL_SAMPLE}, n = {n}" if small_sample(n) else ""
    if low == high:
        return f"no spread ({flag})" if flag else f"no spread (n = {n})"
    unit = " pp" if percent else ""
    return f"[{low}, {high}]{unit}" + (f" ({flag})" if flag else "")


def memory_line(side: str, run: str, memory: dict[str, Any]) -> str:
    """Which memory system a run searched, with its parameters' digest and how its hits were
    mapped to the haystack."""
    if not memory.get("backend"):
        return f"{side} = `{run}`: memory system not recorded (no config.json)."
    found = [
        f"{g} {memory[f'{g} provenance']}"
        for g in ("session", "turn")
        if f"{g} provenance" in memory
    ]
    mapped = f"; hits mapped: {', '.join(found)}" if found else ""
    return f"{side} = `{run}`: memory system {digest_words(memory)}{mapped}."


def _qa_row(row: Row) -> list[str]:
    p = row.paired
    return [
        ROW_LABELS.get(row.name, row.name),
        f"{row.a.correct}/{row.a.n}",
        _pct(row.a.value),
        f"{row.b.correct}/{row.b.n}",
        _pct(row.b.value),
        str(p.n),
        f"{_pct(p.a)} → {_pct(p.b)}",
        _delta(p.delta),
        _ci(p.ci95, p.n),
    ]


def _judge_line(side: str, run: str, labels: JudgeLabels) -> str:
    total = len(labels.judged)
    return (
        f"{side} = `{run}`: judge {labels.judge} ({labels.kind}); {total} questions, "
        f"{total - labels.not_judged} judged, {labels.not_judged} not judged."
    )


def _hooks(c: Comparison) -> ReportHooks:
    """The report hooks of the benchmark both runs are of (none when it is not known)."""
    if c.benchmark is None:
        return NO_HOOKS
    return report_hooks_of(c.benchmark, c.benchmark_source)


def _qa_label(c: Comparison) -> str | None:
    """What the QA accuracy is when the benchmark's own figures are the official ones."""
    return _hooks(c).verdicts_label


def _qa_sections(c: Comparison, qa: QaPart) -> list[Section]:
    scores = qa.scores
    rows = [*scores.per_type, scores.task_averaged, scores.overall, scores.abstention]
    label = _qa_label(c)
    title = f"QA accuracy ({label})" if label is not None else "QA accuracy"
    found = [
        Section(
            title,
            [AVERAGES_NOTE, BOOTSTRAP_NOTE.format(resamples=c.resamples, seed=c.seed)],
            [
                "question type",
                "A correct/n",
                "A accuracy",
                "B correct/n",
                "B accuracy",
                "paired n",
                "paired A → B",
                "Δ B-A",
                "95% CI of Δ",
            ],
            [_qa_row(r) for r in rows],
        )
    ]
    for title, flips in (
        ("Correct in A → wrong in B", scores.regressed),
        ("Wrong in A → correct in B", scores.improved),
    ):
        listed = [[f"`{f.question_id}`", f.question_type] for f in flips]
        note = [] if flips else ["None."]
        found.append(Section(f"{title} ({len(flips)})", note, ["question", "type"], listed, 2))
    return found


def sections(c: Comparison) -> list[Section]:
    intro = [memory_line("A", c.run_a, c.memories[0]), memory_line("B", c.run_b, c.memories[1])]
    replaced = _hooks(c).replaces_qa
    if c.qa is None and replaced is not None:
        intro.append(replaced)
    elif c.qa is None:
        intro.append("QA not compared: not both runs were judged (retrieval only).")
    else:
        intro += [
            _judge_line("A", c.run_a, c.qa.labels_a),
            _judge_line("B", c.run_b, c.qa.labels_b),
        ]
        if not c.qa.judging_matches:
            intro.append("Warning: the runs were judged by different judges or prompts.")
    if c.unequal_budgets:
        intro.append(
            "**Unequal budgets**: the systems were not searched and read alike, so differences"
            " below may come from the budget, not the memory: " + "; ".join(c.unequal_budgets) + "."
        )
    if c.different_datasets:
        intro.append(f"**Different dataset files**: {c.different_datasets}.")
    result = [Section(f"Compare `{c.run_a}` (A) vs `{c.run_b}` (B)", intro)]
    if c.official is not None:
        table = official_table(c.official, c.resamples, c.seed)
        rows = [_metric_row(m) for m in table.rows]
        result.append(Section(table.title, table.paragraphs, table.header, rows))
    if c.qa is not None:
        result += _qa_sections(c, c.qa)
    if not c.retrieval:
        result.append(Section("Retrieval", ["Not compared: a run has no retrieval.parquet."]))
    for part in c.retrieval:
        result.append(
            Section(
                f"Retrieval ({part.granularity} level)",
                [RETRIEVAL_NOTE.format(resamples=c.resamples, seed=c.seed)],
                ["average", "metric", "paired n", "A", "B", "Δ B-A", "95% CI of Δ"],
                [
                    *[[HEADLINE_AVERAGE, *_metric_row(m)] for m in part.official],
                    *[[USER_EVIDENCE_AVERAGE, *_metric_row(m)] for m in part.user_evidence],
                ],
                numeric_from=2,
            )
        )
    if c.qa is not None:
        result.append(Section("Judging", [JUDGING_NOTE]))
    return result


CHART_METRICS = ("recall_any@5", "recall_all@5", "ndcg_any@5", "recall_any@10", "recall_all@10")


def comparison_chart(c: Comparison) -> BarChart:
    """The benchmark's official figures (its report hooks' compare part); else QA accuracy per
    type when both runs were judged, else session-level retrieval."""
    if c.official is not None and c.official.rows:
        return official_chart(c.run_a, c.run_b, c.official)
    if c.qa is not None:
        return chart(c.run_a, c.run_b, c.qa.scores.per_type)
    session = next(p for p in c.retrieval if p.granularity == "session")
    shown = [m for m in session.official if m.metric in CHART_METRICS]
    return BarChart(
        title="Session-level retrieval (official average)",
        series=(f"A: {c.run_a}", f"B: {c.run_b}"),
        groups=[BarGroup(m.metric, (m.paired.a, m.paired.b)) for m in shown],
        y_label="mean, 0-1 as % (paired questions)",
    )


def _metric_row(m: MetricComparison) -> list[str]:
    p = m.paired
    return [
        m.metric,
        str(p.n),
        _num(p.a),
        _num(p.b),
        _delta(p.delta, False),
        _ci(p.ci95, p.n, False),
    ]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(c: Comparison) -> str:
    lines: list[str] = []
    for i, s in enumerate(sections(c)):
        lines += [("# " if i == 0 else "## ") + s.title, ""]
        for paragraph in s.paragraphs:
            lines += [paragraph, ""]
        if s.header and s.rows:
            lines.append("| " + " | ".join(_md_cell(h) for h in s.header) + " |")
            aligns = ["---|" if k < s.numeric_from else "---:|" for k in range(len(s.header))]
            lines.append("|" + "".join(aligns))
            lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in s.rows]
            lines.append("")
    return "\n".join(lines)


def _html_text(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


_STYLE = (
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #ccc;padding:4px 8px}td.n{text-align:right}"
    "th{background:#f4f4f4}code{background:#f4f4f4;padding:0 2px}"
)


def render_html(c: Comparison) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(f'Compare {c.run_a} vs {c.run_b}')}</title>",
        f"<style>{_STYLE}</style></head><body>",
    ]
    for i, s in enumerate(sections(c)):
        tag = "h1" if i == 0 else "h2"
        parts.append(f"<{tag}>{_html_text(s.title)}</{tag}>")
        parts += [f"<p>{_html_text(p)}</p>" for p in s.paragraphs]
        if s.header and s.rows:
            parts.append("<table><tr>" + "".join(f"<th>{_html_text(h)}</th>" for h in s.header))
            for row in s.rows:
                cells = [
                    ('<td class="n">' if i >= s.numeric_from else "<td>") + _html_text(v) + "</td>"
                    for i, v in enumerate(row)
                ]
                parts.append("<tr>" + "".join(cells) + "</tr>")
            parts.append("</table>")
        if i == 1:
            parts.append(f"<figure>{render_svg(comparison_chart(c))}</figure>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _accuracy(acc: Accuracy) -> dict[str, Any]:
    ci = list(acc.ci95) if acc.ci95 is not None else None
    return {"accuracy": acc.value, "correct": acc.correct, "n": acc.n, "ci95": ci}


def _paired(p: PairedDelta) -> dict[str, Any]:
    ci = list(p.ci95) if p.ci95 is not None else None
    return {"n": p.n, "a": p.a, "b": p.b, "delta": p.delta, "ci95": ci}


def _row(row: Row) -> dict[str, Any]:
    return {"a": _accuracy(row.a), "b": _accuracy(row.b), "paired": _paired(row.paired)}


def _run(run: str, labels: JudgeLabels) -> dict[str, Any]:
    return {
        "run_id": run,
        "judge": labels.judge,
        "judge_kind": labels.kind,
        "prompts_sha256": labels.prompts,
        "questions": len(labels.judged),
        "judged": len(labels.judged) - labels.not_judged,
        "not_judged": labels.not_judged,
    }


def _flips(flips: list[Flip]) -> list[dict[str, str]]:
    return [{"question_id": f.question_id, "question_type": f.question_type} for f in flips]


def _qa_json(qa: QaPart) -> dict[str, Any]:
    scores = qa.scores
    return {
        "note": AVERAGES_NOTE,
        "judging_matches": qa.judging_matches,
        "judging_note": JUDGING_NOTE,
        "per_type": {r.name: _row(r) for r in scores.per_type},
        "task_averaged": _row(scores.task_averaged),
        "overall": _row(scores.overall),
        "abstention": _row(scores.abstention),
        "flips": {
            "correct_to_wrong": _flips(scores.regressed),
            "wrong_to_correct": _flips(scores.improved),
        },
    }


def to_json(c: Comparison) -> dict[str, Any]:
    runs: dict[str, Any] = {"a": {"run_id": c.run_a}, "b": {"run_id": c.run_b}}
    if c.qa is not None:
        runs = {"a": _run(c.run_a, c.qa.labels_a), "b": _run(c.run_b, c.qa.labels_b)}
    for side, memory in zip(("a", "b"), c.memories, strict=True):
        runs[side]["memory"] = {
            "backend": memory.get("backend"),
            "params_digest": memory.get("params_digest"),
            "provenance": {
                g: memory[f"{g} provenance"]
                for g in ("session", "turn")
                if f"{g} provenance" in memory
            },
        }
    return {
        "runs": runs,
        "unequal_budgets": c.unequal_budgets,
        "different_datasets": c.different_datasets,
        "bootstrap": {
            "method": "paired percentile bootstrap, stratified by question type",
            "resamples": c.resamples,
            "seed": c.seed,
            "note": BOOTSTRAP_NOTE.format(resamples=c.resamples, seed=c.seed),
        },
        "benchmark": c.benchmark,
        "official": official_json(c.official, c.resamples, c.seed) if c.official else None,
        "qa": _qa_json(c.qa) if c.qa is not None else None,
        "qa_label": _qa_label(c) if c.qa is not None else None,
        "retrieval": {
            part.granularity: {
                "metrics": {m.metric: _paired(m.paired) for m in part.official},
                "with_user_evidence": {m.metric: _paired(m.paired) for m in part.user_evidence},
            }
            for part in c.retrieval
        }
        or None,
        "retrieval_note": RETRIEVAL_NOTE.format(resamples=c.resamples, seed=c.seed),
        "retrieval_metrics": list(RETRIEVAL_METRICS),
    }


def render_json(c: Comparison) -> str:
    return json.dumps(to_json(c), indent=2, ensure_ascii=False) + "\n"
