"""A run's cost and the memory system's own calls, in words and dollars (the figures come from
lme_bench.results.cost)."""

from __future__ import annotations

from typing import Any

from lme_bench.report.labels import dollars, label
from lme_bench.report.summary import system_calls_words

COST_PARTS = ("ingestion", "memory_model", "answering", "judging")
PER_RUN = ("total", "per_question", "per_correct_answer")


def system_markdown(usage: dict[str, Any]) -> str:
    return f"Memory system's own calls ({usage['backend']}): {system_calls_words(usage)}."


def cost_rows(cost: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, dollars) per part, then the run's total and its means."""
    return [(label(part), dollars(cost.get(part))) for part in (*COST_PARTS, *PER_RUN)]


def own_calls_words(cost: dict[str, Any]) -> str:
    """Whether the memory system's own calls are in the cost."""
    recorded = str(cost.get("memory_system") or "")
    return f"counted ({label('memory_model')})" if recorded.startswith("counted") else recorded


def cost_markdown(cost: dict[str, Any]) -> list[str]:
    parts = ", ".join(f"{name} {value}" for name, value in cost_rows(cost)[: len(COST_PARTS)])
    lines = [
        f"Cost (from `[prices]`): {parts}; run total {dollars(cost['total'])}, "
        f"{dollars(cost['per_question'])} per question, {dollars(cost['per_correct_answer'])} "
        "per correct answer (primary judge). "
        f"Memory system's own model calls: {own_calls_words(cost)}.",
    ]
    if cost["unpriced_models"]:
        lines.append(f"No price for: {', '.join(cost['unpriced_models'])} (those parts left out).")
    return lines
