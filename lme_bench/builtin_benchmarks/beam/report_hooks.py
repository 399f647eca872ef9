"""BEAM's report hooks (lme_bench.benchmarks.report_hooks): the leading judge's mean over
abilities in the headline, its report.html section (beam.report), its rubric scores
paired per question in a comparison in place of QA accuracy (beam.compare) and its
mean over abilities in a series' history and on a leaderboard (no interval: BEAM's average of
chat means has none in its own report)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import (
    BoardFigure,
    BoardHeadline,
    CompareWords,
    HistoryFigure,
    HistoryKind,
    ReportHooks,
    Section,
)
from lme_bench.builtin_benchmarks.beam.judge_stage import PROMPT_VERSION


def headline(section: Section) -> list[str]:
    if not section.get("judge"):
        return []
    mean = section["judges"][section["judge"]]["mean_over_abilities"]
    shown = "-" if mean is None else f"{mean:.3f}"
    return [f"BEAM mean over abilities {shown} (judge {section['judge']})"]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def history(section: Section, run_dir: Path) -> HistoryFigure | None:
    judge = _dict(_dict(section.get("judges")).get(str(section.get("judge"))))
    value = _number(judge.get("mean_over_abilities"))
    if value is None:
        return None
    abilities = _dict(judge.get("abilities"))
    per_type = {a: _number(_dict(row).get("score")) for a, row in abilities.items()}
    return HistoryFigure(value, int(judge.get("judged") or 0), per_type)


def leaderboard(section: Section, record: Mapping[str, Any]) -> BoardHeadline | None:
    """The leading judge's mean over abilities, what `verify` checks as the headline; the
    judge's prompt digests are those the run recorded of the checkout's prompt files
    (BUNDLE.json prompts.own_judge.beam)."""
    name = section.get("judge")
    if not name:
        return None
    judge = _dict(_dict(section.get("judges")).get(str(name)))
    recorded = _dict(_dict(_dict(record.get("prompts")).get("own_judge")).get("beam"))
    version = _dict(_dict(record.get("judges")).get(str(name))).get("prompt_version")
    judged = judge.get("judged")
    return BoardHeadline(
        judge=str(name),
        prompt_version=str(version or PROMPT_VERSION),
        prompt_digests=tuple(str(recorded[k]) for k in sorted(recorded)),
        headline=BoardFigure(
            "BEAM mean over abilities",
            _number(judge.get("mean_over_abilities")),
            n=judged if isinstance(judged, int) else None,
        ),
    )


COMPARE_WORDS = CompareWords(
    title="BEAM rubric scores (official)",
    note=(
        "Each question's rubric score (the judge's first judgment) by {judge}; A and B over the "
        "questions scored in both runs (paired n): per ability the mean within each chat, then "
        "over the chats, and the mean over abilities (each ability weighs the same), as BEAM's "
        "report_results.py averages. An undefined (NaN) score leaves its question out. 95% "
        "interval of Δ: paired percentile bootstrap over those questions, resampled within each "
        "ability and chat ({resamples} resamples, seed {seed})."
    ),
    y_label="rubric score, 0-1 as % (paired questions)",
    first_column="ability",
)

HOOKS = ReportHooks(
    headline=headline,
    html_section="lme_bench.builtin_benchmarks.beam.report:html_section",
    compare="lme_bench.builtin_benchmarks.beam.compare:compare_beam",
    compare_words=COMPARE_WORDS,
    replaces_qa="QA accuracy not compared: BEAM questions get rubric scores, not verdicts.",
    history_kind=HistoryKind(
        "beam", "BEAM rubric score (mean over abilities)", judged=True, percent=False
    ),
    history=history,
    leaderboard=leaderboard,
)
