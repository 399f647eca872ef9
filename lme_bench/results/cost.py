"""What a run's model calls cost, from the tokens each table recorded and `[prices]`.

Parts: ingestion (the memory agent's calls), answering (the QA model) and judging (every LLM judge
and repeat). A memory system's own model calls are counted only where the system reports them;
the embedded store makes none, and MCP servers report none, so the figure says so. A part whose
model has no price is left out and named, never counted as free.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lme_bench.config.settings import PriceSettings
from lme_bench.ingest.records import SessionRecord
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

MEMORY_SYSTEM_CALLS = "not reported by the memory system (none are counted)"


@dataclass(frozen=True, slots=True)
class Usage:
    model: str
    input_tokens: int
    output_tokens: int


def priced(usages: Iterable[Usage], prices: dict[str, PriceSettings]) -> tuple[float, set[str]]:
    total, unpriced = 0.0, set()
    for usage in usages:
        if not usage.input_tokens and not usage.output_tokens:
            continue
        price = prices.get(usage.model)
        if price is None:
            unpriced.add(usage.model)
            continue
        total += usage.input_tokens / 1e6 * price.input_per_mtok
        total += usage.output_tokens / 1e6 * price.output_per_mtok
    return total, unpriced


def run_cost(
    *,
    agent_model: str | None,
    records: Sequence[SessionRecord],
    hypotheses: Sequence[HypothesisRow],
    scores: Sequence[ScoreRow],
    questions: int,
    correct: int | None,
    prices: dict[str, PriceSettings],
) -> dict[str, Any] | None:
    """Cost per part, per run, per question and per correct answer; None without prices."""
    if not prices:
        return None
    parts = {
        "ingestion": [Usage(agent_model or "", r.input_tokens, r.output_tokens) for r in records],
        "answering": [Usage(h.qa_model, h.input_tokens, h.output_tokens) for h in hypotheses],
        "judging": [
            Usage(s.judge, s.input_tokens, s.output_tokens) for s in scores if s.judge_kind == "llm"
        ],
    }
    costs: dict[str, float | None] = {}
    unpriced: set[str] = set()
    for name, usages in parts.items():
        value, missing = priced(usages, prices)
        costs[name] = None if missing else value
        unpriced |= missing
    total = None if unpriced else sum(v or 0.0 for v in costs.values())
    return {
        **costs,
        "total": total,
        "per_question": total / questions if total is not None and questions else None,
        "per_correct_answer": total / correct if total is not None and correct else None,
        "unpriced_models": sorted(unpriced),
        "memory_system": MEMORY_SYSTEM_CALLS,
    }


def cost_markdown(cost: dict[str, Any]) -> list[str]:
    def shown(value: float | None, digits: int = 4) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [
        f"Cost (from `[prices]`): ingestion {shown(cost['ingestion'])}, answering "
        f"{shown(cost['answering'])}, judging {shown(cost['judging'])}; run total "
        f"{shown(cost['total'])}, {shown(cost['per_question'], 5)} per question, "
        f"{shown(cost['per_correct_answer'], 5)} per correct answer (primary judge). "
        f"Memory system's own model calls: {cost['memory_system']}.",
    ]
    if cost["unpriced_models"]:
        lines.append(f"No price for: {', '.join(cost['unpriced_models'])} (those parts left out).")
    return lines
