"""The memory tools as the agent sees them, and what the harness does with its calls.

The LLM sees `add_entry(summary)` and `put_context(content)` only: vault and memory ids are
injected in code, the raw entry is the observed message itself, and every entry is tagged with
the opaque session key, turn index, role and session date it came from. Calls are buffered for
the session and written when it ends, so a session either lands whole or is redone cleanly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from lme_bench.backends.entry_system import entry_summary
from lme_bench.backends.entry_types import NewEntry


class add_entry(BaseModel):
    """Store one memory entry about the message just observed."""

    summary: str = Field(description="self-contained summary, at most 512 characters")


class put_context(BaseModel):
    """Replace the memory's context document with this complete updated version."""

    content: str = Field(description="the whole context document")


AGENTIC_TOOLS: list[type[BaseModel]] = [add_entry, put_context]
CONTEXT_TOOLS: list[type[BaseModel]] = [put_context]


@dataclass(frozen=True, slots=True)
class Observed:
    """The turn a tool call is about (None: the session-end call)."""

    session_key: str
    session_date: str
    turn_index: int
    role: str
    content: str


@dataclass
class SessionWrites:
    """The session's buffered writes and what the agent asked for."""

    entries: list[NewEntry] = field(default_factory=list)
    context: str | None = None
    tool_calls: Counter[str] = field(default_factory=Counter)
    dropped_calls: int = 0
    problems: list[str] = field(default_factory=list)

    def apply(
        self,
        calls: list[dict[str, Any]],
        observed: Observed | None,
        *,
        cap: int,
        allowed: tuple[str, ...],
    ) -> None:
        """Take the model's tool calls for one step, within the per-turn cap."""
        entry_written = False
        for number, call in enumerate(calls):
            name, args = call.get("name", ""), call.get("args") or {}
            self.tool_calls[name] += 1
            if number >= cap:
                self.dropped_calls += 1
                continue
            if name not in allowed:
                self.problems.append(f"unknown tool {name!r}")
            elif name == "put_context":
                content = str(args.get("content") or "").strip()
                if content:
                    self.context = content
                else:
                    self.problems.append("put_context without content")
            elif observed is None or entry_written:
                self.dropped_calls += 1  # one entry per observed message
            else:
                entry_written = self._entry(args, observed)

    def _entry(self, args: dict[str, Any], observed: Observed) -> bool:
        summary = str(args.get("summary") or "").strip()
        if not summary:
            self.problems.append("add_entry without summary")
            return False
        summary = entry_summary(summary)
        tags = {
            "session_key": observed.session_key,
            "turn_index": str(observed.turn_index),
            "role": observed.role,
            "session_date": observed.session_date,
            "source": "agent",
        }
        self.entries.append(NewEntry(raw_entry=observed.content, summary=summary, tags=tags))
        return True
