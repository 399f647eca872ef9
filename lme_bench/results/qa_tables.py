"""hypotheses.parquet and scores.parquet: declared schemas and writers-to-tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import pyarrow as pa

SCHEMA_VERSION = "3"  # 2: judges' readable verdicts; 3: retries by cause


@dataclass
class HypothesisRow:
    question_id: str
    question_type: str
    is_abstention: bool
    hypothesis: str | None
    strategy: str
    qa_model: str
    prompt_version: str
    top_ke: int
    top_kc: int
    queries: list[str] = field(default_factory=list)
    searches: int = 0
    entries_shown: int = 0
    context_chars: int = 0
    evidence_in_context: bool | None = None  # did what the reader saw hold an evidence turn?
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    retries_throttled: int = 0
    retries_timeout: int = 0
    retries_connection: int = 0
    retries_server: int = 0
    seconds: float = 0.0
    status: str = "ok"  # ok | error
    error: str | None = None


@dataclass
class ScoreRow:
    question_id: str
    question_type: str
    is_abstention: bool
    judge: str  # "openai:gpt-4o-2024-08-06", or "fallback:normalized-match"
    judge_kind: str  # llm | fallback
    repeat: int
    prompt_version: str
    prompt_name: str
    prompt_sha256: str
    label: bool | None  # the official label ('yes' in the reply); None: no verdict
    readable: bool | None  # LLM judges: the reply held a yes or a no word
    raw_verdict: str
    status: str  # ok | error (LLM call failed after retries) | ungradable (fallback)
    attribution: str
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    retries_throttled: int = 0
    retries_timeout: int = 0
    retries_connection: int = 0
    retries_server: int = 0
    seconds: float = 0.0
    error: str | None = None


def _schema(table: str, fields: list[pa.Field]) -> pa.Schema:
    meta = {"lme_bench.table": table, "lme_bench.schema_version": SCHEMA_VERSION}
    return pa.schema([pa.field("run_id", pa.string(), nullable=False), *fields], metadata=meta)


_COMMON = [
    pa.field("question_id", pa.string(), nullable=False),
    pa.field("question_type", pa.string(), nullable=False),
    pa.field("is_abstention", pa.bool_(), nullable=False),
]
_USAGE = [
    pa.field("llm_calls", pa.int32(), nullable=False),
    pa.field("input_tokens", pa.int64(), nullable=False),
    pa.field("output_tokens", pa.int64(), nullable=False),
]

HYPOTHESES_SCHEMA = _schema(
    "hypotheses",
    [
        *_COMMON,
        pa.field("hypothesis", pa.string()),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("qa_model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("top_ke", pa.int32(), nullable=False),
        pa.field("top_kc", pa.int32(), nullable=False),
        pa.field("queries", pa.list_(pa.string()), nullable=False),
        pa.field("searches", pa.int32(), nullable=False),
        pa.field("entries_shown", pa.int32(), nullable=False),
        pa.field("context_chars", pa.int32(), nullable=False),
        pa.field("evidence_in_context", pa.bool_()),
        *_USAGE,
        pa.field("retries", pa.int32(), nullable=False),
        pa.field("retries_throttled", pa.int32(), nullable=False),
        pa.field("retries_timeout", pa.int32(), nullable=False),
        pa.field("retries_connection", pa.int32(), nullable=False),
        pa.field("retries_server", pa.int32(), nullable=False),
        pa.field("seconds", pa.float64(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string()),
    ],
)

SCORES_SCHEMA = _schema(
    "scores",
    [
        *_COMMON,
        pa.field("judge", pa.string(), nullable=False),
        pa.field("judge_kind", pa.string(), nullable=False),
        pa.field("repeat", pa.int32(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("prompt_name", pa.string(), nullable=False),
        pa.field("prompt_sha256", pa.string(), nullable=False),
        pa.field("label", pa.bool_()),
        pa.field("readable", pa.bool_()),
        pa.field("raw_verdict", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("attribution", pa.string(), nullable=False),
        *_USAGE,
        pa.field("retries", pa.int32(), nullable=False),
        pa.field("retries_throttled", pa.int32(), nullable=False),
        pa.field("retries_timeout", pa.int32(), nullable=False),
        pa.field("retries_connection", pa.int32(), nullable=False),
        pa.field("retries_server", pa.int32(), nullable=False),
        pa.field("seconds", pa.float64(), nullable=False),
        pa.field("error", pa.string()),
    ],
)


def hypotheses_table(run_id: str, rows: Sequence[HypothesisRow]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"run_id": run_id, **asdict(r)} for r in rows], schema=HYPOTHESES_SCHEMA
    )


def scores_table(run_id: str, rows: Sequence[ScoreRow]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"run_id": run_id, **asdict(r)} for r in rows], schema=SCORES_SCHEMA
    )
