"""LoCoMo's report hooks (lme_bench.benchmarks.report_hooks): its official F1 leads the
headline, an LLM judge's accuracy is labelled as not the official metric, its report.html
section (locomo.report), its F1 paired per question in a comparison
(locomo.compare) and its F1 in a series' history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import (
    CompareWords,
    HistoryFigure,
    HistoryKind,
    QaWords,
    ReportHooks,
    Section,
)
from lme_bench.builtin_benchmarks.locomo.benchmark import CATEGORY_NAMES
from lme_bench.builtin_benchmarks.locomo.judging import NOT_OFFICIAL

QUESTION_SCORES = "locomo_scores.json"  # each question's F1, written by locomo.report


def headline(section: Section) -> list[str]:
    if section.get("overall_f1") is None:
        return []
    return [f"LoCoMo F1 {section['overall_f1']:.3f} (official metric)"]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def history(section: Section, run_dir: Path) -> HistoryFigure | None:
    """The overall F1, bootstrapped over locomo_scores.json's questions (none without it)."""
    value = _number(section.get("overall_f1"))
    if value is None:
        return None
    scores: list[float] = []
    name = section.get("question_scores")
    if isinstance(name, str) and (run_dir / name).is_file():
        try:
            rows = json.loads((run_dir / name).read_text(encoding="utf-8")).get("questions")
            scores = [float(r["f1"]) for r in rows or [] if _number(r.get("f1")) is not None]
        except (OSError, ValueError, AttributeError, TypeError, KeyError):
            scores = []
    categories = _dict(section.get("categories"))
    per_type = {c: _number(_dict(row).get("f1")) for c, row in categories.items()}
    return HistoryFigure(value, int(section.get("questions") or 0), per_type, scores)


COMPARE_WORDS = CompareWords(
    title="LoCoMo F1 (official)",
    note=(
        "Each question's official token F1 as its run's report scored it (locomo_scores.json); "
        "A and B: the mean F1 over the questions scored in both runs (paired n), per category "
        "and overall (each question once), as LoCoMo's statistics average. 95% interval of Δ: "
        "paired percentile bootstrap over those questions, resampled within each category "
        "({resamples} resamples, seed {seed})."
    ),
    y_label="mean F1, 0-1 as % (paired questions)",
    first_column="category",
)

HOOKS = ReportHooks(
    headline=headline,
    verdicts_caveat="not the official LoCoMo metric",
    verdicts_label=NOT_OFFICIAL,
    html_section="lme_bench.builtin_benchmarks.locomo.report:html_section",
    qa_words=QaWords(
        abstaining="adversarial (category 5) questions count in their category",
        types=tuple(CATEGORY_NAMES.values()),
        types_note=(
            f"LoCoMo categories: {NOT_OFFICIAL} (its official figure is token F1, in the LoCoMo"
            " section); the rule above is how a verdict is read."
        ),
    ),
    compare="lme_bench.builtin_benchmarks.locomo.compare:compare_locomo",
    compare_words=COMPARE_WORDS,
    history_kind=HistoryKind("locomo_f1", "LoCoMo F1 (official)", judged=False, percent=False),
    history=history,
)
