"""What ingestion reports about each session: one row of ingest.parquet."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from lme_bench.common.row_schema import Int64


@dataclass
class SessionRecord:
    question_id: str
    session_key: str
    session_index: int
    mode: str
    turns: int
    llm_calls: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)  # what the model asked for
    memory_calls: dict[str, int] = field(default_factory=dict)  # what reached the memory
    input_tokens: Int64 = 0
    output_tokens: Int64 = 0
    # the memory system's own model calls while the session was written (mem0's extraction,
    # Graphiti's graph building), so a stopped run counts them from its checkpoints
    system_model_calls: int = 0
    system_input_tokens: Int64 = 0
    system_output_tokens: Int64 = 0
    seconds: float = 0.0  # writing the session, waits on lme-bench left out
    wait_seconds: float = 0.0  # waits on lme-bench's embedder, model load, limiters
    retries: int = 0
    retries_throttled: int = 0
    retries_timeout: int = 0
    retries_connection: int = 0
    retries_server: int = 0
    capped_replies: int = 0  # replies the output cap cut short (finish_reason "length")
    timeouts: int = 0  # call attempts that timed out, retried or not
    entries_written: int = 0
    context_chars: int = 0
    dropped_tool_calls: int = 0  # usable calls left out: past the per-turn cap, a 2nd add_entry
    # calls not made, by reason: unknown-tool | unparsable-arguments | invalid-arguments
    unusable_tool_calls: dict[str, int] = field(default_factory=dict)
    # the question's memory after ingestion: ok | empty | context-unchanged (ingest/health.py)
    ingest_health: str = "unchecked"
    status: str = "ok"  # ok | step-cap | error
    error: str | None = None
    resumed: bool = False  # taken from a checkpoint of an earlier attempt

    def to_json(self) -> dict[str, Any]:
        # shallow: dataclasses.asdict deep-copies, which costs most of writing a big run
        row = {name: getattr(self, name) for name in _FIELD_NAMES}
        row["tool_calls"], row["memory_calls"] = dict(self.tool_calls), dict(self.memory_calls)
        row["unusable_tool_calls"] = dict(self.unusable_tool_calls)
        return row

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        return cls(**data)


_FIELD_NAMES = tuple(f.name for f in fields(SessionRecord))
