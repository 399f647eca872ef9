"""ingest.parquet: one row per (question, session), and the run's ingestion totals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.retry import retries_text, retry_totals

SCHEMA_VERSION = "2"  # 2: retries by cause
_COUNTS = pa.map_(pa.string(), pa.int64())

INGEST_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("session_key", pa.string(), nullable=False),
        pa.field("session_index", pa.int32(), nullable=False),
        pa.field("mode", pa.string(), nullable=False),
        pa.field("turns", pa.int32(), nullable=False),
        pa.field("llm_calls", pa.int32(), nullable=False),
        pa.field("tool_calls", _COUNTS, nullable=False),
        pa.field("memory_calls", _COUNTS, nullable=False),
        pa.field("input_tokens", pa.int64(), nullable=False),
        pa.field("output_tokens", pa.int64(), nullable=False),
        pa.field("seconds", pa.float64(), nullable=False),
        pa.field("retries", pa.int32(), nullable=False),
        pa.field("retries_throttled", pa.int32(), nullable=False),
        pa.field("retries_timeout", pa.int32(), nullable=False),
        pa.field("retries_connection", pa.int32(), nullable=False),
        pa.field("retries_server", pa.int32(), nullable=False),
        pa.field("entries_written", pa.int32(), nullable=False),
        pa.field("context_chars", pa.int32(), nullable=False),
        pa.field("dropped_tool_calls", pa.int32(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string()),
        pa.field("resumed", pa.bool_(), nullable=False),
    ],
    metadata={"lme_bench.table": "ingest", "lme_bench.schema_version": SCHEMA_VERSION},
)


def ingest_table(run_id: str, records: Sequence[SessionRecord]) -> pa.Table:
    rows = []
    for record in records:
        row = record.to_json()
        row["tool_calls"] = list(record.tool_calls.items())
        row["memory_calls"] = list(record.memory_calls.items())
        rows.append({"run_id": run_id, **row})
    return pa.Table.from_pylist(rows, schema=INGEST_SCHEMA)


def ingest_totals(records: Sequence[SessionRecord]) -> dict[str, Any]:
    """Totals and per-question / per-turn means, for the summary and the manifest."""
    questions = len({r.question_id for r in records})
    turns = sum(r.turns for r in records)
    llm_calls = sum(r.llm_calls for r in records)
    tool_calls: Counter[str] = Counter()
    memory_calls: Counter[str] = Counter()
    for record in records:
        tool_calls.update(record.tool_calls)
        memory_calls.update(record.memory_calls)
    return {
        "modes": sorted({r.mode for r in records}),
        "questions": questions,
        "sessions": len(records),
        "turns": turns,
        "llm_calls": llm_calls,
        "llm_calls_per_turn": round(llm_calls / turns, 3) if turns else None,
        "tool_calls": dict(sorted(tool_calls.items())),
        "memory_calls": dict(sorted(memory_calls.items())),
        "input_tokens": sum(r.input_tokens for r in records),
        "output_tokens": sum(r.output_tokens for r in records),
        **retry_totals(records),
        "entries_written": sum(r.entries_written for r in records),
        "sessions_not_ok": sum(r.status != "ok" for r in records),
        "resumed_sessions": sum(r.resumed for r in records),
        "seconds": round(sum(r.seconds for r in records), 3),
    }


def totals_markdown(totals: dict[str, Any]) -> str:
    calls = ", ".join(f"{k} {v}" for k, v in totals["memory_calls"].items()) or "none"
    return "\n".join(
        [
            f"## Ingestion ({', '.join(totals['modes']) or 'none'})",
            "",
            f"{totals['questions']} questions, {totals['sessions']} sessions, {totals['turns']} "
            f"turns; {totals['llm_calls']} LLM calls ({totals['llm_calls_per_turn']} per turn), "
            f"{totals['input_tokens']} input / {totals['output_tokens']} output tokens, "
            f"{retries_text(totals)}; memory calls: {calls}; "
            f"{totals['sessions_not_ok']} sessions not ok, {totals['resumed_sessions']} resumed.",
            "",
        ]
    )
