"""The memory system's own model calls while a session is written, added to its record (and
so to its checkpoint): what `MemorySystem.usage()` counted between two readings."""

from __future__ import annotations

from lme_bench.backends.protocol import MemorySystem, Usage
from lme_bench.backends.recall import usage_since
from lme_bench.ingest.records import SessionRecord


def add_system_calls(record: SessionRecord, system: MemorySystem, before: Usage) -> None:
    """Add the system's calls since `before` (a reading of its `usage()`) to `record`."""
    made = usage_since(system, before)
    record.system_model_calls += made.model_calls
    record.system_input_tokens += made.input_tokens
    record.system_output_tokens += made.output_tokens
