"""What a run's model calls cost, from the tokens each table recorded and `[prices]`.

Parts: ingestion (the memory agent's calls), the memory system's own calls (mem0's, LangMem's or
Graphiti's extraction, made through `[models] memory`), answering (the QA model) and judging
(every LLM judge and repeat). The embedded store makes no calls of its own, and Mycelian-shaped
MCP servers report none, so the figure says so. A part whose model has no price is left out and
named, never counted as free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lme_bench.config.settings import PriceSettings, Settings
from lme_bench.ingest.question import IngestOutcome
from lme_bench.ingest.records import SessionRecord
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

MEMORY_SYSTEM_CALLS = "not reported by the memory system (none are counted)"


@dataclass(frozen=True, slots=True)
class Usage:
    model: str
    input_tokens: int
    output_tokens: int
    price_factor: float = 1.0  # a batch API's discount on the model's price


def priced(usages: Iterable[Usage], prices: dict[str, PriceSettings]) -> tuple[float, set[str]]:
    total, unpriced = 0.0, set()
    for usage in usages:
        if not usage.input_tokens and not usage.output_tokens:
            continue
        price = prices.get(usage.model)
        if price is None:
            unpriced.add(usage.model)
            continue
        total += usage.input_tokens / 1e6 * price.input_per_mtok * usage.price_factor
        total += usage.output_tokens / 1e6 * price.output_per_mtok * usage.price_factor
    return total, unpriced


def system_usage(
    outcomes: Sequence[IngestOutcome],
    settings: Settings,
    unfinished: Sequence[SessionRecord] = (),
) -> dict[str, Any] | None:
    """The memory system's own calls over this run's ingestions, those that did not finish
    counted from their sessions' checkpoints (`unfinished`); None when it made none."""
    totals = {"model_calls": 0, "input_tokens": 0, "output_tokens": 0}
    totals |= {"embedding_calls": 0, "embedded_texts": 0, "capped_replies": 0, "timeouts": 0}
    for outcome in outcomes:
        usage = getattr(outcome, "system_usage", None)  # outcomes cached before it: none
        for name in totals:
            totals[name] += int(getattr(usage, name, 0))
    for record in unfinished:
        totals["model_calls"] += record.system_model_calls
        totals["input_tokens"] += record.system_input_tokens
        totals["output_tokens"] += record.system_output_tokens
    if not any(totals.values()):
        return None
    return {"backend": settings.memory.backend, "model": settings.models.memory, **totals}


def _system_usage(system: dict[str, Any]) -> Usage:
    return Usage(system["model"] or "", system["input_tokens"], system["output_tokens"])


def run_cost(
    *,
    agent_model: str | None,
    memory_system: dict[str, Any] | None = None,
    records: Sequence[SessionRecord],
    hypotheses: Sequence[HypothesisRow],
    scores: Sequence[ScoreRow],
    questions: int,
    correct: int | None,
    prices: dict[str, PriceSettings],
    batch_factors: Mapping[tuple[str, str, int], float] | None = None,
    answer_factors: Mapping[tuple[str, str, int], float] | None = None,
) -> dict[str, Any] | None:
    """Cost per part, per run, per question and per correct answer; None without prices.
    `batch_factors`: (question id, judge, repeat) of verdicts a batch job gave, and
    `answer_factors`: (question id, QA model, 0) of answers one gave, at its price factor
    (lme_bench.results.batch_jobs)."""
    if not prices:
        return None
    factors, answered = batch_factors or {}, answer_factors or {}
    parts = {
        "ingestion": [Usage(agent_model or "", r.input_tokens, r.output_tokens) for r in records],
        "memory_model": [_system_usage(memory_system)] if memory_system else [],
        "answering": [
            Usage(
                h.qa_model,
                h.input_tokens,
                h.output_tokens,
                answered.get((h.question_id, h.qa_model, 0), 1.0),
            )
            for h in hypotheses
        ],
        "judging": [
            Usage(
                s.judge,
                s.input_tokens,
                s.output_tokens,
                factors.get((s.question_id, s.judge, s.repeat), 1.0),
            )
            for s in scores
            if s.judge_kind == "llm"
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
        "memory_system": "counted (memory_model)" if memory_system else MEMORY_SYSTEM_CALLS,
    }
