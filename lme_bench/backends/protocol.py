"""The memory-system protocol: what a benchmark needs from any memory system.

A backend is one class: `Backend(params, env)`, where `params` is an instance of the class's
`Params` (a `BackendParams` subclass checked against `[memory.params]`) and `env` a
`BackendEnv`. lme-bench builds one per stage of a question, opens one memory per question,
feeds that memory the question's sessions in date order, waits until the memory is ready,
searches it, and closes the backend. Everything a backend receives is leak-safe: memory
titles and session keys are opaque, and no gold label (answers, evidence flags, question or
session ids) ever reaches it.

Beyond these calls, a backend declares what else it offers in `capabilities`:
- PROVENANCE: hits carry the session key they came from (from the system's own fields);
- TURN_PROVENANCE: hits carry the turn index too (systems that keep turns as they are);
- EXTRACTS: the system rewrites what it is given (extracted facts, graph edges), so a hit's
  text is not a turn of the haystack;
- DELETES: `delete_memory` removes a memory (Mycelian's tool surface has no delete);
- ENTRIES: the backend has `entry_memory` (lme_bench.backends.entry_memory.EntryMemory), the
  entries-and-context surface the memory agent writes to in the `agentic` and `context-only`
  ingestion modes. Without it only `raw` ingestion applies: sessions go in as they are and the
  system does its own extraction;
- AGENT_TOOLS: `async agent_tools(memory_id) -> list` gives the system's own tools for one
  memory as LangChain tools; without ENTRIES, `agentic` ingestion has the memory agent write
  with them (lme_bench/ingest/agent_tools.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict


class Capability(StrEnum):
    PROVENANCE = "provenance"
    TURN_PROVENANCE = "turn-provenance"
    EXTRACTS = "extracts"
    ENTRIES = "entries"
    DELETES = "deletes"
    AGENT_TOOLS = "agent-tools"  # agent_tools(memory_id): the server's own tools, for an agent


@dataclass(frozen=True, slots=True)
class Turn:
    index: int  # position in its session, from 0
    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class Session:
    key: str  # opaque and stable for the session; never the dataset's session id
    date: str  # the session's date as the dataset writes it, e.g. "2023/05/20 (Sat) 02:21"
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result. Provenance fields are set only from the system's own data."""

    text: str
    score: float
    date: str | None = None
    session_key: str | None = None
    turn_index: int | None = None


@dataclass
class Usage:
    """The memory system's own model and embedding calls (those lme-bench does not make)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    embedding_calls: int = 0
    embedded_texts: int = 0
    capped_replies: int = 0  # model replies the output cap cut short
    timeouts: int = 0  # model call attempts that timed out

    def add(self, other: Usage) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class BackendParams(BaseModel):
    """Base of a backend's `[memory.params]`: unknown keys are errors that name the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class BackendEnv:
    """What lme-bench gives a backend.

    data_dir: a folder the backend may keep its files in (one per results folder and backend;
        every stage of every run gets the same one, so memories persist between stages);
    scope: reserved, always "" (memory titles already differ between runs);
    chat_model: lme-bench's `[models] memory` model for the system's own LLM calls, as a
        LangChain chat model that goes through the provider layer (limits, retries by cause,
        token accounting, prices); None when the config sets no memory model;
    embedder: loads the configured embedding model (the packaged MiniLM by default), for
        systems that take one;
    """

    data_dir: Path
    scope: str
    chat_model: Any | None = None
    embedder: Callable[[], Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class MemorySystem(Protocol):
    """The contract."""

    Params: ClassVar[type[BackendParams]]
    name: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]]

    async def open_memory(self, title: str) -> str:
        """Create the memory called `title`, or reopen it, and return its id."""
        ...

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        """Store one session. Ingesting a session key again must not duplicate what it holds
        (a retried question resends the session it was cut off in)."""
        ...

    async def wait_until_ready(self, memory_id: str) -> None:
        """Return once everything ingested is searchable (extraction and indexing done)."""
        ...

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        """Up to `k` hits, best first, with no score threshold: every system is asked for the
        same depth, and the depth it returned is recorded."""
        ...

    async def delete_memory(self, memory_id: str) -> None:
        """Remove the memory and all it holds (with DELETES; otherwise NotImplementedError)."""
        ...

    def usage(self) -> Usage:
        """The system's own calls since the backend was built."""
        ...

    async def close(self) -> None: ...
