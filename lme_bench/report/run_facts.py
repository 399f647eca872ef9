"""What a run's reports say about the run itself: the dataset file it read, with its sha256, and
its wall time, kept apart from times summed over questions."""

from __future__ import annotations

from typing import Any

from lme_bench.report.labels import seconds

WALL_NOTE = "from the run's start to its report"


def wall_words(value: float | None) -> str:
    """ "6 min 13 s wall", or "-" when not recorded."""
    return "-" if value is None else f"{seconds(value)} wall"


def run_facts(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs: the dataset file and its sha256, the run's wall time."""
    run = summary.get("run") or {}
    dataset = run.get("dataset") or {}
    facts = []
    if dataset:
        facts.append(("dataset", f"{dataset.get('path')} (sha256 {dataset.get('sha256')})"))
    if "wall_seconds" in run:
        facts.append(("run time", f"{wall_words(run['wall_seconds'])} ({WALL_NOTE})"))
    return facts


def run_facts_markdown(summary: dict[str, Any]) -> str:
    """summary.md's lines on the run ("" when the summary records none)."""
    facts = run_facts(summary)
    if not facts:
        return ""
    return "\n".join(["## Run", "", *(f"- {name}: {value}" for name, value in facts)]) + "\n"
