"""hypotheses.parquet and scores.parquet: their row types, which declare the tables' columns
(lme_bench.common.row_schema), and their writers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from lme_bench.common.row_schema import Int64, row_fields, rows_table, table_schema

SCHEMA_VERSION = "6"  # 2: judges' readable verdicts; 3: retries by cause; 4: capped, timeouts;
# 5: the memory system's own calls during the answer's searches; 6: scores' graded `score`


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
    input_tokens: Int64 = 0
    output_tokens: Int64 = 0
    retries: int = 0
    retries_throttled: int = 0
    retries_timeout: int = 0
    retries_connection: int = 0
    retries_server: int = 0
    capped_replies: int = 0  # replies the output cap cut short (finish_reason "length")
    timeouts: int = 0  # call attempts that timed out, retried or not
    # the memory system's own calls during the searches (query embeddings, model calls)
    memory_embedding_calls: int = 0
    memory_model_calls: int = 0
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
    input_tokens: Int64 = 0
    output_tokens: Int64 = 0
    retries: int = 0
    retries_throttled: int = 0
    retries_timeout: int = 0
    retries_connection: int = 0
    retries_server: int = 0
    capped_replies: int = 0  # replies the output cap cut short (finish_reason "length")
    timeouts: int = 0  # call attempts that timed out, retried or not
    seconds: float = 0.0
    error: str | None = None
    # None for yes/no verdicts and in tables before schema 6
    score: float | None = None  # a graded official score in [0, 1] (BEAM's); label is then None


HYPOTHESES_SCHEMA = table_schema("hypotheses", SCHEMA_VERSION, row_fields(HypothesisRow))
SCORES_SCHEMA = table_schema("scores", SCHEMA_VERSION, row_fields(ScoreRow))


def hypotheses_table(run_id: str, rows: Sequence[HypothesisRow]) -> pa.Table:
    return rows_table(run_id, rows, HYPOTHESES_SCHEMA)


def scores_table(run_id: str, rows: Sequence[ScoreRow]) -> pa.Table:
    return rows_table(run_id, rows, SCORES_SCHEMA)
