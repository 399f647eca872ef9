"""ingest.parquet: one row per (question, session), the run's ingestion totals, and which
questions' memories were left empty by their ingestion."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from lme_bench.common.row_schema import row_fields, rows_table, table_schema
from lme_bench.ingest.health import EMPTY, UNCHECKED
from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.calls import call_totals, calls_text

SCHEMA_VERSION = "3"  # 2: retries by cause; 3: unusable tool calls, ingest health, capped, timeouts

INGEST_SCHEMA = table_schema("ingest", SCHEMA_VERSION, row_fields(SessionRecord))


def ingest_table(run_id: str, records: Sequence[SessionRecord]) -> pa.Table:
    return rows_table(run_id, records, INGEST_SCHEMA)


def ingest_totals(records: Sequence[SessionRecord]) -> dict[str, Any]:
    """Totals and per-question / per-turn means, for the summary and the manifest."""
    questions = len({r.question_id for r in records})
    turns = sum(r.turns for r in records)
    llm_calls = sum(r.llm_calls for r in records)
    tool_calls: Counter[str] = Counter()
    memory_calls: Counter[str] = Counter()
    unusable: Counter[str] = Counter()
    for record in records:
        tool_calls.update(record.tool_calls)
        memory_calls.update(record.memory_calls)
        unusable.update(record.unusable_tool_calls)
    return {
        "modes": sorted({r.mode for r in records}),
        "questions": questions,
        "sessions": len(records),
        "turns": turns,
        "llm_calls": llm_calls,
        "llm_calls_per_turn": round(llm_calls / turns, 3) if turns else None,
        "tool_calls": dict(sorted(tool_calls.items())),
        "memory_calls": dict(sorted(memory_calls.items())),
        "unusable_tool_calls": dict(sorted(unusable.items())),
        "dropped_tool_calls": sum(r.dropped_tool_calls for r in records),
        "input_tokens": sum(r.input_tokens for r in records),
        "output_tokens": sum(r.output_tokens for r in records),
        **call_totals(records),
        "entries_written": sum(r.entries_written for r in records),
        "sessions_not_ok": sum(r.status != "ok" for r in records),
        "resumed_sessions": sum(r.resumed for r in records),
        "seconds": round(sum(r.seconds for r in records), 3),
    }


def _tool_call_text(totals: dict[str, Any]) -> str:
    """The memory agent's tool calls the harness could not use or left out ("" without one)."""
    if not totals["llm_calls"]:
        return ""
    unusable = totals.get("unusable_tool_calls") or {}
    reasons = ", ".join(f"{k} {v}" for k, v in unusable.items())
    text = f" Unusable tool calls: {sum(unusable.values())}" + (f" ({reasons})" if reasons else "")
    return text + f"; {totals.get('dropped_tool_calls', 0)} left out over the caps."


def totals_markdown(totals: dict[str, Any]) -> str:
    calls = ", ".join(f"{k} {v}" for k, v in totals["memory_calls"].items()) or "none"
    return "\n".join(
        [
            f"## Ingestion ({', '.join(totals['modes']) or 'none'})",
            "",
            f"{totals['questions']} questions, {totals['sessions']} sessions, {totals['turns']} "
            f"turns; {totals['llm_calls']} LLM calls ({totals['llm_calls_per_turn']} per turn), "
            f"{totals['input_tokens']} input / {totals['output_tokens']} output tokens, "
            f"{calls_text(totals)}; memory calls: {calls}; "
            f"{totals['sessions_not_ok']} sessions not ok, {totals['resumed_sessions']} resumed."
            + _tool_call_text(totals),
            "",
        ]
    )


EMPTY_RULE = (
    "no entry and no context document; for a memory system without entries, no hit for any"
    " search made of its own sessions' text after wait_until_ready"
)
SHOWN_IDS = 20


def question_health(records: Sequence[SessionRecord], checked: Mapping[str, str]) -> dict[str, str]:
    """Each question's ingest health: from `checked` (this run's ingestions), else from its
    session rows (ingestions recorded earlier)."""
    health = {r.question_id: r.ingest_health for r in records}
    health.update({q: h for q, h in checked.items() if h != UNCHECKED})
    return health


def memory_health(health: Mapping[str, str]) -> dict[str, Any]:
    """For the summary: questions checked, and those whose memory was left empty."""
    empty = sorted(q for q, h in health.items() if h == EMPTY)
    checked = sum(h != UNCHECKED for h in health.values())
    return {"checked": checked, "empty": len(empty), "question_ids": empty, "rule": EMPTY_RULE}


def _shown(ids: Sequence[str]) -> str:
    return ", ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")


def empty_memory_text(part: Mapping[str, Any]) -> str:
    """One sentence naming the questions whose memory is empty ("" when none is)."""
    if not part.get("empty"):
        return ""
    return (
        f"memory empty after ingestion for {part['empty']} of {part['checked']} questions"
        f" ({_shown(part['question_ids'])})"
    )


def empty_memory_markdown(part: Mapping[str, Any]) -> str:
    """The summary's warning about empty memories ("" when there is none)."""
    if not part.get("empty"):
        return ""
    return (
        f"**Empty memory**: the ingestion of {part['empty']} of {part['checked']} questions"
        f" stored nothing ({_shown(part['question_ids'])}). Empty: {part['rule']}. Their answers"
        " cannot come from memory (attributed `memory-empty` when wrong)."
    )
