"""ingest.parquet: one row per (question, session), the run's ingestion totals, and which
questions' memories were left empty by their ingestion."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from lme_bench.common.row_schema import row_fields, rows_table, table_schema
from lme_bench.ingest.health import CONTEXT_UNCHANGED, EMPTY, UNCHECKED
from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.calls import call_totals

# 2: retries by cause; 3: unusable tool calls, ingest health, capped, timeouts; 4: waits on
# lme-bench apart (wait_seconds), no longer in seconds; 5: the memory system's own calls
SCHEMA_VERSION = "5"

INGEST_SCHEMA = table_schema("ingest", SCHEMA_VERSION, row_fields(SessionRecord))


def ingest_table(run_id: str, records: Sequence[SessionRecord]) -> pa.Table:
    return rows_table(run_id, records, INGEST_SCHEMA)


def ingest_totals(records: Sequence[SessionRecord], shared_builds: bool = False) -> dict[str, Any]:
    """Totals and per-turn means, for the summary and the manifest. Ingestions are counted as
    `questions`, or as `builds` when the run's questions share memory builds (a build's
    sessions are recorded once, under its first question)."""
    ingested = len({r.question_id for r in records})
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
        ("builds" if shared_builds else "questions"): ingested,
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
        "wait_seconds": round(sum(r.wait_seconds for r in records), 3),
    }


EMPTY_RULE = (
    "no entry and no context document; for a memory system without entries, no hit for any"
    " search made of its own sessions' text after wait_until_ready"
)


def question_health(records: Sequence[SessionRecord], checked: Mapping[str, str]) -> dict[str, str]:
    """Each question's ingest health: from `checked` (this run's ingestions), else from its
    session rows (ingestions recorded earlier)."""
    health = {r.question_id: r.ingest_health for r in records}
    health.update({q: h for q, h in checked.items() if h != UNCHECKED})
    return health


CONTEXT_UNCHANGED_RULE = (
    "the memory agent's context document was stored in the first session and changed in none"
    " of the later ones"
)


def memory_health(health: Mapping[str, str]) -> dict[str, Any]:
    """For the summary: questions checked, those whose memory was left empty, and those whose
    context document never changed after the first session."""
    empty = sorted(q for q, h in health.items() if h == EMPTY)
    unchanged = sorted(q for q, h in health.items() if h == CONTEXT_UNCHANGED)
    checked = sum(h != UNCHECKED for h in health.values())
    return {
        "checked": checked,
        "empty": len(empty),
        "question_ids": empty,
        "rule": EMPTY_RULE,
        "context_unchanged": {
            "count": len(unchanged),
            "question_ids": unchanged,
            "rule": CONTEXT_UNCHANGED_RULE,
        },
    }
