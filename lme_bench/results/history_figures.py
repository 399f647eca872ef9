"""A run's headline figures for its series' history, each with its 95% interval and its figure
per question type, read from the run's folder as any version of lme-bench wrote it.

- QA overall and task-averaged: the official-rule accuracy of the judge whose figures lead
  (summary.json `qa`, as lme_bench.results.qa_scores.primary_judge picks it), its bootstrap
  interval as the run recorded it;
- session recall_all@5 and nDCG@10: the official average (summary.json `session.overall`, skips
  abstention), the interval a percentile bootstrap over the questions of retrieval.parquet that
  average counts (status ok, not abstention);
- a benchmark's own figure, from its section of summary.json by its `history` report hook
  (lme_bench.benchmarks.report_hooks: LoCoMo's F1, the interval over locomo_scores.json's
  questions; BEAM's leading judge's mean over abilities, no interval).
A figure the run did not make, or a folder from before it was recorded, is None: blank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy

from lme_bench.benchmarks.report_hooks import HistoryKind, ReportHooks, with_hooks
from lme_bench.metrics.judge_agreement import percentile_interval

RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Figure:
    value: float | None  # 0-1; None: the run has no such figure
    ci95: tuple[float, float] | None = None
    n: int = 0
    per_type: dict[str, float | None] = field(default_factory=dict)


FigureKind = HistoryKind  # a figure's key, title, whether a judge makes it, how it is shown

BASE_FIGURES = (
    FigureKind("qa_overall", "QA overall", judged=True, percent=True),
    FigureKind("qa_task_averaged", "QA task-averaged", judged=True, percent=True),
    FigureKind("recall_all@5", "session recall_all@5", judged=False, percent=False),
    FigureKind("ndcg@10", "session nDCG@10", judged=False, percent=False),
)
RETRIEVAL_METRICS = {"recall_all@5": "recall_all@5", "ndcg@10": "ndcg_any@10"}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = _number(value[0]), _number(value[1])
        if low is not None and high is not None:
            return (low, high)
    return None


def mean_interval(values: list[float]) -> tuple[float, float] | None:
    """Percentile 95% interval of the mean over resamples of the questions (seeded)."""
    if not values:
        return None
    data = numpy.array(values, dtype=float)
    rng = numpy.random.default_rng(SEED)
    means = data[rng.integers(0, len(data), size=(RESAMPLES, len(data)))].mean(axis=1)
    return percentile_interval(means)


def _qa(summary: dict[str, Any]) -> dict[str, Figure]:
    qa = _dict(summary.get("qa"))
    if not _dict(qa.get("judges")):
        return {}
    judges = [_dict(j) for j in _dict(qa.get("judges")).values()]
    llm = [j for j in judges if j.get("kind", "llm") == "llm"]  # as primary_judge picks
    judge = (llm or judges)[0]
    per_type = {
        t: _number(_dict(a).get("accuracy")) for t, a in _dict(judge.get("per_type")).items()
    }
    found = {}
    for key, name in (("qa_overall", "overall"), ("qa_task_averaged", "task_averaged")):
        record = _dict(judge.get(name))
        found[key] = Figure(
            _number(record.get("accuracy")),
            _interval(record.get("ci95")),
            int(record.get("n") or 0),
            per_type,
        )
    return found


def _retrieval_values(run_dir: Path) -> dict[str, list[float]]:
    """Per retrieval metric, the value of each question the official session average counts
    (only the columns needed are read: a table's ranked ids are large)."""
    path = run_dir / "retrieval.parquet"
    if not path.is_file():
        return {}
    import pyarrow.parquet as pq  # only where there is a table

    metrics = list(RETRIEVAL_METRICS.values())
    try:
        rows = pq.read_table(
            path, columns=["granularity", "status", "is_abstention", *metrics]
        ).to_pylist()
    except Exception:  # an older or unreadable table: the figures stand without intervals
        return {}
    scored = [
        r
        for r in rows
        if r["granularity"] == "session" and r["status"] == "ok" and not r["is_abstention"]
    ]
    return {m: [float(r[m]) for r in scored if r[m] is not None] for m in metrics}


def _retrieval(summary: dict[str, Any], run_dir: Path) -> dict[str, Figure]:
    session = _dict(summary.get("session"))
    overall = _dict(session.get("overall"))
    if not overall.get("n"):
        return {}
    values = _retrieval_values(run_dir)
    by_type = _dict(session.get("by_type"))
    return {
        key: Figure(
            _number(overall.get(metric)),
            mean_interval(values.get(metric) or []),
            int(overall["n"]),
            {t: _number(_dict(row).get(metric)) for t, row in by_type.items()},
        )
        for key, metric in RETRIEVAL_METRICS.items()
        if _number(overall.get(metric)) is not None
    }


def _historied() -> list[tuple[str, ReportHooks, HistoryKind]]:
    return [(n, h, h.history_kind) for n, h in with_hooks() if h.history_kind and h.history]


def figure_kinds() -> tuple[FigureKind, ...]:
    """The history's figures: QA and retrieval, then each benchmark's own (its report hooks)."""
    return (*BASE_FIGURES, *(kind for _, _, kind in _historied()))


def _benchmarks(summary: dict[str, Any], run_dir: Path) -> dict[str, Figure]:
    """The figures of the benchmarks whose section the summary holds."""
    found = {}
    for name, hooks, kind in _historied():
        section = summary.get(name)
        figure = hooks.call("history", section, run_dir) if isinstance(section, dict) else None
        if figure is not None:
            ci95 = mean_interval(figure.samples) if figure.samples is not None else None
            found[kind.key] = Figure(figure.value, ci95, figure.n, figure.per_type)
    return found


def headline_figures(summary: dict[str, Any], run_dir: Path) -> dict[str, Figure]:
    """The run's headline figures by `figure_kinds` key; those it did not make are left out."""
    return _qa(summary) | _retrieval(summary, run_dir) | _benchmarks(summary, run_dir)
