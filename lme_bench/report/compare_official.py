"""A comparison's benchmark section: the benchmark's own official figures of both runs per
category or ability and overall, paired per question, with the interval of B - A
(lme_bench.compare.official), in the words of its report hooks (`compare_words`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lme_bench.benchmarks.report_hooks import CompareWords, report_hooks_of
from lme_bench.compare.official import OfficialPart
from lme_bench.compare.paired import MetricComparison
from lme_bench.report.compare_chart import BarChart, BarGroup

HEADER = ["{first}", "paired n", "A", "B", "Δ B-A", "95% CI of Δ"]


@dataclass(frozen=True, slots=True)
class OfficialTable:
    title: str
    paragraphs: list[str]
    header: list[str]
    rows: list[MetricComparison]


def _words(part: OfficialPart) -> CompareWords:
    words = report_hooks_of(part.benchmark, part.source).compare_words
    if words is None:
        raise ValueError(f"benchmark {part.benchmark!r} compares runs without compare_words")
    return words


def _note(part: OfficialPart, resamples: int, seed: int) -> str:
    return _words(part).note.format(resamples=resamples, seed=seed, judge=part.judge)


def official_table(part: OfficialPart, resamples: int, seed: int) -> OfficialTable:
    """The section's title, its words and the rows to show (none when not compared)."""
    paragraphs = [f"Metric: {part.metric}.", part.note or _note(part, resamples, seed)]
    header = [h.format(first=_words(part).first_column) for h in HEADER]
    return OfficialTable(_words(part).title, paragraphs, header, part.rows)


def official_json(part: OfficialPart, resamples: int, seed: int) -> dict[str, Any]:
    def paired(m: MetricComparison) -> dict[str, Any]:
        p = m.paired
        ci = list(p.ci95) if p.ci95 is not None else None
        return {"n": p.n, "a": p.a, "b": p.b, "delta": p.delta, "ci95": ci}

    return {
        "benchmark": part.benchmark,
        "metric": part.metric,
        "judge": part.judge,
        "note": part.note or _note(part, resamples, seed),
        "rows": {m.metric: paired(m) for m in part.rows},
    }


def official_chart(run_a: str, run_b: str, part: OfficialPart) -> BarChart:
    """Both runs' figures over the paired questions, per category or ability and overall."""
    return BarChart(
        title=_words(part).title,
        series=(f"A: {run_a}", f"B: {run_b}"),
        groups=[BarGroup(m.metric, (m.paired.a, m.paired.b)) for m in part.rows],
        y_label=_words(part).y_label,
    )
