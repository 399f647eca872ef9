"""The memory tools as the agent sees them, and what the harness does with its calls.

The LLM sees `add_entry(summary)` and `put_context(content)` only: vault and memory ids are
injected in code, the raw entry is the observed message itself, and every entry is tagged with
the opaque session key, turn index, role and session date it came from. Calls are buffered for
the session and written when it ends, so a session either lands whole or is redone cleanly.

A call the harness cannot use is counted by its reason (`UNUSABLE_REASONS`): a tool the mode
does not offer, arguments that did not parse as JSON (the provider's `invalid_tool_calls`), or
arguments that do not validate against the tool's schema (or whose text is empty).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field, ValidationError

from lme_bench.agent.prompts import observe_text, session_end_text
from lme_bench.agent.state import SessionState
from lme_bench.backends.entry_system import entry_summary
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import SessionView
from lme_bench.entries.models import NewEntry


class add_entry(BaseModel):
    """Store one memory entry about the message just observed."""

    summary: str = Field(description="self-contained summary, at most 512 characters")


class put_context(BaseModel):
    """Replace the memory's context document with this complete updated version."""

    content: str = Field(description="the whole context document")


AGENTIC_TOOLS: list[type[BaseModel]] = [add_entry, put_context]
CONTEXT_TOOLS: list[type[BaseModel]] = [put_context]
CONTEXT_ONLY = ("put_context",)
_SCHEMAS: dict[str, type[BaseModel]] = {tool.__name__: tool for tool in AGENTIC_TOOLS}

UNKNOWN_TOOL = "unknown-tool"
UNPARSABLE_ARGUMENTS = "unparsable-arguments"
INVALID_ARGUMENTS = "invalid-arguments"
UNUSABLE_REASONS = (UNKNOWN_TOOL, UNPARSABLE_ARGUMENTS, INVALID_ARGUMENTS)


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
    dropped_calls: int = 0  # usable calls left out: past the per-turn cap, a second add_entry
    unusable: Counter[str] = field(default_factory=Counter)  # by reason (UNUSABLE_REASONS)
    problems: list[str] = field(default_factory=list)

    def apply(
        self,
        calls: list[dict[str, Any]],
        observed: Observed | None,
        *,
        cap: int,
        allowed: tuple[str, ...],
        unparsed: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Take the model's tool calls for one step, within the per-turn cap; `unparsed`: the
        calls whose arguments did not parse (counted, never used)."""
        for call in unparsed:
            name = str(call.get("name") or "")
            self.tool_calls[name] += 1
            self._unusable(UNPARSABLE_ARGUMENTS, f"{name or 'a tool call'}: arguments not JSON")
        entry_written = False
        for number, call in enumerate(calls):
            name = call.get("name", "")
            self.tool_calls[name] += 1
            if number >= cap:
                self.dropped_calls += 1
                continue
            if name not in allowed:
                self._unusable(UNKNOWN_TOOL, f"unknown tool {name!r}")
                continue
            args = self._valid_args(name, call.get("args"))
            if args is None:
                continue
            if name == "put_context":
                self.context = args["content"]
            elif observed is None or entry_written:
                self.dropped_calls += 1  # one entry per observed message
            else:
                self._entry(args["summary"], observed)
                entry_written = True

    def _unusable(self, reason: str, problem: str) -> None:
        self.unusable[reason] += 1
        self.problems.append(problem)

    def _valid_args(self, name: str, args: Any) -> dict[str, str] | None:
        """The call's arguments, their text stripped, when they validate and the text is not
        empty; else None, counted as invalid."""
        try:
            parsed = _SCHEMAS[name].model_validate(args if args is not None else {})
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "arguments"
            self._unusable(INVALID_ARGUMENTS, f"{name}: {where}: {first['msg']}")
            return None
        values = {key: str(value).strip() for key, value in parsed.model_dump().items()}
        if not all(values.values()):
            self._unusable(INVALID_ARGUMENTS, f"{name} without {', '.join(values)}")
            return None
        return values

    def _entry(self, summary: str, observed: Observed) -> None:
        summary = entry_summary(summary)
        tags = {
            "session_key": observed.session_key,
            "turn_index": str(observed.turn_index),
            "role": observed.role,
            "session_date": observed.session_date,
            "source": "agent",
        }
        self.entries.append(NewEntry(raw_entry=observed.content, summary=summary, tags=tags))


class EntryTools:
    """Our add_entry / put_context as the agent's toolset (session.py): one session's calls
    buffered in `writes`, stored by the caller when the session ends."""

    def __init__(self, settings: IngestSettings) -> None:
        self.cap = settings.max_tool_calls_per_turn
        self.allowed = ("add_entry", "put_context") if settings.mode == "agentic" else CONTEXT_ONLY
        self.writes = SessionWrites()

    @property
    def context(self) -> str | None:
        """The context document the agent last wrote in this session, if any."""
        return self.writes.context

    def observe_text(
        self, session: SessionView, index: int, state: SessionState, context_due: bool
    ) -> str:
        turn = session.turns[index]
        return observe_text(
            session_date=session.date,
            turn_number=index + 1,
            turns=len(session.turns),
            role=turn.role,
            content=turn.content,
            context=state["context"],
            window=state["window"],
            context_due=context_due,
        )

    def end_text(self, session: SessionView, state: SessionState) -> str:
        return session_end_text(session.date, state["context"])

    async def take(self, reply: AIMessage, observed: Observed | None) -> None:
        self.writes.apply(
            [dict(call) for call in reply.tool_calls],
            observed,
            cap=self.cap,
            allowed=self.allowed,
            unparsed=[dict(call) for call in reply.invalid_tool_calls],
        )
