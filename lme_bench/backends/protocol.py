"""The memory-system protocol: what a benchmark needs from any memory system.

A backend is one class: `Backend(params, env)`, where `params` is an instance of the class's
`Params` (a `BackendParams` subclass checked against `[memory.params]`) and `env` a
`BackendEnv`. lme-bench opens one memory per question, feeds that memory the question's
sessions in date order, waits until the memory is ready, searches it, and closes the backend.
Everything a backend receives is leak-safe: memory titles and session keys are opaque, and no
gold label (answers, evidence flags, question or session ids) ever reaches it.

Beyond these calls, a backend declares what else it offers in `capabilities` (see
`Capability`): provenance of its hits, extraction, deletion, an entries surface for the
memory agent (ENTRIES: `entries`, lme_bench.entries.capability.Entries) or tools of its own
for it (AGENT_TOOLS: `async agent_tools(memory_id) -> list` of LangChain tools). Ingestion,
retrieval and answering talk to this contract alone, and to those capability objects where
a system declares them.

How the harness calls a backend (what an implementation may rely on, and must allow):

- One instance per stage of a question: ingestion, retrieval and answering each build their
  own (`Backend(params, env)`, then the calls, then `close()`), and one more instance looks up
  or creates the memories of a run's questions before ingestion starts. An instance is never
  reused for another question or stage; `close()` is awaited once, also after a failure (not
  when the constructor itself raised).
- All calls on one instance run on one asyncio event loop, in the thread that built it: each
  stage of a question runs under its own `asyncio.run()`, in a worker thread of the flow's task
  runner or, for batched stages, in a worker process. The constructor runs on that thread too.
- Calls on one instance may overlap: the answer stage's `multi-query` strategy awaits several
  `search` calls at once (`asyncio.gather`). `ingest_session` calls for one memory are awaited
  one after the other, in date order, never alongside another call on that memory.
- The ingestion stage searches too: for a system without ENTRIES, once a memory's sessions are
  in, it awaits `wait_until_ready` and then probes the memory's health with
  `search(memory_id, query, question_date=..., k=1)`, where `query` is text the memory was
  given (a user message, then a single word), until one finds a hit: one to six searches
  (lme_bench/ingest/health.py). A probe that raises leaves the memory's health `unchecked` and
  the ingestion stands; retrieval and answering search again and report the failure as theirs.
- Instances overlap too: questions run in parallel (threads of one process and several
  processes), and one question's retrieval and answer stages may search its memory at the same
  time, each with its own instance over the same `BackendEnv.data_dir`. A backend that keeps
  files there must allow several processes to open them at once.
- Failures: raise `TransientMemoryError` for a fault worth retrying (server busy, a lost
  connection); the stage is retried with backoff, like a model provider's transient fault, and
  each retry is one WARNING line in the log naming the stage, the question, the attempt and the
  error. Any other exception, or a transient one whose retries are used up, fails the question,
  with its traceback in the log (once per kind of failure: the type and the line raising it)
  and its file and line in the question's `error`.
- The backend's code is part of what an ingestion depends on: a plug-in's source file is
  hashed into the ingestion's fingerprint, so after the file changes, memories filled by the
  old code are not ingested into again under the same run id (the run stops with one error
  before any work); see docs/memory-systems.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict


class TransientMemoryError(Exception):
    """Raise it for a failure worth retrying: the server is busy, the connection was lost, a
    lock is held. lme-bench retries the question's stage (twice, after about 2 s and 10 s),
    each retry one WARNING line in the log; any other exception fails the question without a
    retry."""


class Capability(StrEnum):
    """What a backend offers beyond the calls every backend has, declared in `capabilities`."""

    PROVENANCE = "provenance"
    """Hits carry the session key they came from (`Hit.session_key`, from the system's own
    fields): gold-evidence metrics at session granularity are exact."""
    TURN_PROVENANCE = "turn-provenance"
    """Hits carry the turn index too (`Hit.turn_index`), for systems that keep turns as they
    are; implies PROVENANCE."""
    EXTRACTS = "extracts"
    """The system rewrites what it is given (extracted facts, graph edges), so a hit's text is
    not a turn of the haystack; ingestion of such a system is never batched."""
    ENTRIES = "entries"
    """The backend has `entries` (lme_bench.entries.capability.Entries): the entries and
    context documents of its memories, by memory id, which the memory agent writes to in the
    `agentic` and `context-only` ingestion modes; `raw` ingestion writes one entry per turn
    there. Without it only `raw` ingestion applies: sessions go in as they are and the system
    does its own extraction. (A backend written before `entries` may offer `entry_memory`, a
    vaulted lme_bench.entries.entry_memory.EntryMemory, instead: it is used in the default
    vault, one per host.)"""
    DELETES = "deletes"
    """`delete_memory` removes a memory; without it `delete_memory` raises
    NotImplementedError."""
    AGENT_TOOLS = "agent-tools"
    """`async agent_tools(memory_id) -> list` gives the system's own tools for one memory as
    LangChain tools; without ENTRIES, `agentic` ingestion has the memory agent write with
    them (lme_bench/ingest/agent_tools.py)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a session."""

    index: int
    """Position in its session, from 0."""
    role: str
    """`"user"` or `"assistant"`."""
    content: str
    """The message text as the dataset has it (for a named speaker, LoCoMo's, it starts with
    the name: `"Ada: I adopted a greyhound."`)."""
    speaker: str | None = None
    """The speaker's name where the benchmark has named speakers (LoCoMo's two people, whose
    turns are all `"user"` turns); None where it has none (LongMemEval's user and assistant).
    A system that keeps who said what may store it; the text carries the name either way."""


@dataclass(frozen=True, slots=True)
class Session:
    """One conversation of a question's haystack, as `ingest_session` receives it."""

    key: str
    """Opaque, unique within the question's memory (its rank in date order, e.g. `"s003"`; a
    session shared by two questions may have two keys); never the dataset's session id."""
    date: str
    """The session's date as the dataset writes it, e.g. `"2023/05/20 (Sat) 02:21"`."""
    turns: tuple[Turn, ...]
    """The session's turns in order."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result. Provenance fields are set only from the system's own data."""

    text: str
    """What the system returns for the hit: a turn, a session, an extracted fact."""
    score: float
    """The system's own score; hits come best first whatever their scores."""
    date: str | None = None
    """The date of the session the hit came from, as `Session.date` gave it, if the system
    keeps it."""
    session_key: str | None = None
    """`Session.key` of the session the hit came from (with `Capability.PROVENANCE`)."""
    turn_index: int | None = None
    """`Turn.index` of the turn the hit came from (with `Capability.TURN_PROVENANCE`)."""
    role: str | None = None
    """`Turn.role` of the turn the hit came from, if the system keeps it (the reader shows it)."""
    id: str | None = None
    """The system's own id of the item, if it has one: results of several searches are merged
    by it (without it, by session key, turn index and text)."""


@dataclass
class Usage:
    """The memory system's own model and embedding calls (those lme-bench does not make).
    Calls through `BackendEnv.chat_model` are counted by lme-bench already: count here only
    calls the system makes by other means."""

    model_calls: int = 0
    """Chat or completion model calls."""
    input_tokens: int = 0
    """Input (prompt) tokens of those calls."""
    output_tokens: int = 0
    """Output (completion) tokens of those calls."""
    embedding_calls: int = 0
    """Calls to an embedding model (one call may embed many texts)."""
    embedded_texts: int = 0
    """Texts embedded over all embedding calls."""
    capped_replies: int = 0
    """Model replies the output cap cut short."""
    timeouts: int = 0
    """Model call attempts that timed out."""

    def add(self, other: Usage) -> None:
        """Add `other`'s counts to these."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class BackendParams(BaseModel):
    """Base of a backend's `[memory.params]`: subclass it with a field per parameter (give
    each a `description`); unknown keys are errors that name the key and suggest the nearest
    valid one. Instances are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class BackendEnv:
    """What lme-bench gives a backend besides its parameters (which are its own, checked once
    per run). Every stage of every run builds it the same way
    (lme_bench.backends.configured.run_env), and so does the conformance suite's
    `build_system`."""

    data_dir: Path
    """A folder the backend may keep its files in, created before the backend is built:
    `<results_dir>/backends/<key>/`, one per results folder and backend class (see
    docs/memory-systems.md), shared by every stage of every run, so memories persist between
    stages and runs. Several instances, in several processes, use it at once. The folder
    follows the class however `[memory] backend` spells it, but a run's recorded settings and
    its memories' identity (the ingestion fingerprint; with `[cache] scope = "shared"`, the
    memory titles) follow the spelling: keep one spelling per results folder."""
    scope: str
    """Reserved, always `""` (memory titles already differ between runs)."""
    chat_model: Any | None = None
    """lme-bench's `[models] memory` model for the system's own LLM calls: a LangChain chat
    model (`ainvoke`, `with_structured_output`, ...) that goes through the provider layer
    (limits, retries by cause, token accounting, prices). None when the config sets no memory
    model."""
    embedder: Callable[[], Any] | None = None
    """Call it to get the configured embedding model (`[memory] embedding_model`, the packaged
    all-MiniLM-L6-v2 by default): an object with `name` (str), `dim` (int) and `embed(texts)`
    returning one L2-normalised vector per text (lme_bench.embeddings.Embedder), not a
    sentence-transformers model. The model is loaded once per process, at the first `embed`,
    and shared by every instance and stage in that process (with a cache of the vectors it
    made); each call returns a new view of it that counts its own calls, so keep the one you
    get. MiniLM needs the `dense` extra; without it the call raises a ConfigError saying how to
    install it. None only when a backend is built by hand. Time an `embed` spends waiting for
    the model (its first load, another thread's forward pass) is recorded as wait, not as the
    system's latency, when it is called in the call's own task or through `asyncio.to_thread`
    (docs/performance.md, What the latency figures measure)."""


@runtime_checkable
class MemorySystem(Protocol):
    """The contract: a class with these attributes and methods (no base class is needed).
    Every method but `usage` is a coroutine."""

    Params: ClassVar[type[BackendParams]]
    """The class checking `[memory.params]`: a `BackendParams` subclass."""
    name: ClassVar[str]
    """A short, stable name for the system (e.g. `"chroma"`); part of its storage folder and
    shown in the summary."""
    capabilities: ClassVar[frozenset[Capability]]
    """What the backend offers beyond these calls (see `Capability`)."""

    async def open_memory(self, title: str) -> str:
        """Create the memory called `title`, or reopen it, and return its id. A new backend
        object over the same `data_dir` must return the same id for the same title."""
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
        same depth, and the depth it returned is recorded. `question_date` is the date the
        question is asked on, as the dataset writes it."""
        ...

    async def delete_memory(self, memory_id: str) -> None:
        """Remove the memory and all it holds (with DELETES; otherwise NotImplementedError)."""
        ...

    def usage(self) -> Usage:
        """The system's own calls since the backend was built."""
        ...

    async def close(self) -> None:
        """Release what the instance holds (connections, files, threads)."""
        ...
