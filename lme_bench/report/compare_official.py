"""A comparison's LoCoMo or BEAM section: the benchmark's own official figures of both runs per
category (LoCoMo) or ability (BEAM) and overall, paired per question, with the interval of
B - A (lme_bench.compare.official)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lme_bench.compare.official import OfficialPart
from lme_bench.compare.paired import MetricComparison
from lme_bench.report.compare_chart import BarChart, BarGroup

TITLES = {"locomo": "LoCoMo F1 (official)", "beam": "BEAM rubric scores (official)"}
NOTES = {
    "locomo": (
        "Each question's official token F1 as its run's report scored it (locomo_scores.json); "
        "A and B: the mean F1 over the questions scored in both runs (paired n), per category "
        "and overall (each question once), as LoCoMo's statistics average. 95% interval of Δ: "
        "paired percentile bootstrap over those questions, resampled within each category "
        "({resamples} resamples, seed {seed})."
    ),
    "beam": (
        "Each question's rubric score (the judge's first judgment) by {judge}; A and B over the "
        "questions scored in both runs (paired n): per ability the mean within each chat, then "
        "over the chats, and the mean over abilities (each ability weighs the same), as BEAM's "
        "report_results.py averages. An undefined (NaN) score leaves its question out. 95% "
        "interval of Δ: paired percentile bootstrap over those questions, resampled within each "
        "ability and chat ({resamples} resamples, seed {seed})."
    ),
}
Y_LABELS = {
    "locomo": "mean F1, 0-1 as % (paired questions)",
    "beam": "rubric score, 0-1 as % (paired questions)",
}
HEADER = ["{first}", "paired n", "A", "B", "Δ B-A", "95% CI of Δ"]


@dataclass(frozen=True, slots=True)
class OfficialTable:
    title: str
    paragraphs: list[str]
    header: list[str]
    rows: list[MetricComparison]


def official_table(part: OfficialPart, resamples: int, seed: int) -> OfficialTable:
    """The section's title, its words and the rows to show (none when not compared)."""
    words = NOTES[part.benchmark].format(resamples=resamples, seed=seed, judge=part.judge)
    paragraphs = [f"Metric: {part.metric}.", part.note or words]
    first = "category" if part.benchmark == "locomo" else "ability"
    header = [h.format(first=first) for h in HEADER]
    return OfficialTable(TITLES[part.benchmark], paragraphs, header, part.rows)


def official_json(part: OfficialPart, resamples: int, seed: int) -> dict[str, Any]:
    def paired(m: MetricComparison) -> dict[str, Any]:
        p = m.paired
        ci = list(p.ci95) if p.ci95 is not None else None
        return {"n": p.n, "a": p.a, "b": p.b, "delta": p.delta, "ci95": ci}

    return {
        "benchmark": part.benchmark,
        "metric": part.metric,
        "judge": part.judge,
        "note": part.note
        or NOTES[part.benchmark].format(resamples=resamples, seed=seed, judge=part.judge),
        "rows": {m.metric: paired(m) for m in part.rows},
    }


def official_chart(run_a: str, run_b: str, part: OfficialPart) -> BarChart:
    """Both runs' figures over the paired questions, per category or ability and overall."""
    return BarChart(
        title=TITLES[part.benchmark],
        series=(f"A: {run_a}", f"B: {run_b}"),
        groups=[BarGroup(m.metric, (m.paired.a, m.paired.b)) for m in part.rows],
        y_label=Y_LABELS[part.benchmark],
    )
