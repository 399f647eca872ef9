"""What ingestion reads from and writes to a memory, over the surface its system offers: one
interface (`MemorySurface`), picked once per system by its declared capabilities.

- `EntrySurface`, a system with Capability.ENTRIES: what a memory holds is counted (entries,
  plus one for a stored context), raw sessions go in as tagged entries and the memory agent
  writes with our entry tools; its health and excerpt are read back from the entries.
- `SessionSurface`, any other system, through the protocol alone: what a memory holds is the
  sessions checkpointed as ingested, sessions go to `ingest_session` and the memory agent writes
  with the system's own tools; its health is probed by searching it (health.py), and it has no
  excerpt to show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from lme_bench.backends.capabilities import entries_of
from lme_bench.backends.protocol import MemorySystem
from lme_bench.common.limits import Limiter
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import QuestionView
from lme_bench.entries.capability import Entries
from lme_bench.ingest.as_they_are import TurnEntries, WholeSessions
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.excerpt import UNAVAILABLE, MemoryExcerpt, read_excerpt
from lme_bench.ingest.health import context_health, entries_health, searched_health
from lme_bench.ingest.loop import SessionWriter
from lme_bench.ingest.records import SessionRecord

if TYPE_CHECKING:  # LangChain is imported only when the memory agent writes
    from langchain_core.language_models import BaseChatModel

    from lme_bench.providers.retry import RetryPolicy


class MemorySurface(Protocol):
    """How one ingestion reaches a memory of its system."""

    async def held(self, memory_id: str) -> int:
        """What the memory holds, counted: 0 is an empty memory."""
        ...

    async def entries(self, memory_id: str) -> int:
        """The entries the memory holds (0 for a system that keeps none of ours)."""
        ...

    async def health(
        self, memory_id: str, view: QuestionView, entries: int, sessions: Sequence[SessionRecord]
    ) -> str:
        """The memory's ingest health once its sessions are in (health.py); `entries` as
        `entries()` counted them after the ingestion."""
        ...

    async def excerpt(self, memory_id: str) -> MemoryExcerpt | None:
        """What the memory holds, for the report (None: it could not be read)."""
        ...

    def raw_writer(self, checkpoints: Checkpoints, *, fresh: bool) -> SessionWriter:
        """The writer of ingestion mode `raw`; `fresh`: the memory held nothing before."""
        ...

    def agent_writer(
        self,
        model: BaseChatModel,
        settings: IngestSettings,
        checkpoints: Checkpoints,
        policy: RetryPolicy,
        limiter: Limiter | None,
    ) -> SessionWriter:
        """The writer of the memory agent's modes (`agentic`, `context-only`)."""
        ...


class EntrySurface:
    """A memory reached through its system's entries."""

    def __init__(self, entries: Entries, mode: str) -> None:
        self.store = entries
        self.mode = mode

    async def held(self, memory_id: str) -> int:
        """Entries, plus one when a context is stored (context-only ingestion writes none)."""
        count = await self.store.count_entries(memory_id)
        return count + int(bool(await self.store.get_context(memory_id)))

    async def entries(self, memory_id: str) -> int:
        return await self.store.count_entries(memory_id)

    async def health(
        self, memory_id: str, view: QuestionView, entries: int, sessions: Sequence[SessionRecord]
    ) -> str:
        health = await entries_health(self.store, memory_id, entries)
        if self.mode != "raw":  # the memory agent keeps its context document
            health = context_health(health, sessions)
        return health

    async def excerpt(self, memory_id: str) -> MemoryExcerpt | None:
        return await read_excerpt(self.store, memory_id)

    def raw_writer(self, checkpoints: Checkpoints, *, fresh: bool) -> SessionWriter:
        return TurnEntries(self.store, checkpoints, fresh=fresh)

    def agent_writer(
        self,
        model: BaseChatModel,
        settings: IngestSettings,
        checkpoints: Checkpoints,
        policy: RetryPolicy,
        limiter: Limiter | None,
    ) -> SessionWriter:
        from lme_bench.ingest.agent import AgentWriter

        return AgentWriter(self.store, model, settings, checkpoints, policy, limiter)


class SessionSurface:
    """A memory reached through the protocol alone; `checkpoints()` gives the ingestion's
    checkpoints (opened when first asked for)."""

    def __init__(self, system: MemorySystem, checkpoints: Callable[[], Checkpoints]) -> None:
        self.system = system
        self.checkpoints = checkpoints

    async def held(self, memory_id: str) -> int:
        return self.checkpoints().sessions_done(memory_id)

    async def entries(self, memory_id: str) -> int:
        return 0

    async def health(
        self, memory_id: str, view: QuestionView, entries: int, sessions: Sequence[SessionRecord]
    ) -> str:
        return await searched_health(self.system, memory_id, view)

    async def excerpt(self, memory_id: str) -> MemoryExcerpt | None:
        return UNAVAILABLE

    def raw_writer(self, checkpoints: Checkpoints, *, fresh: bool) -> SessionWriter:
        return WholeSessions(self.system, checkpoints)

    def agent_writer(
        self,
        model: BaseChatModel,
        settings: IngestSettings,
        checkpoints: Checkpoints,
        policy: RetryPolicy,
        limiter: Limiter | None,
    ) -> SessionWriter:
        from lme_bench.ingest.agent_tools import ToolAgentWriter

        return ToolAgentWriter(self.system, model, settings, checkpoints, policy, limiter)


def surface_of(
    system: MemorySystem, mode: str, checkpoints: Callable[[], Checkpoints]
) -> MemorySurface:
    """The surface ingestion in `mode` reaches the system's memories through: its entries when
    it declares them, else the protocol alone."""
    entries = entries_of(system)
    return SessionSurface(system, checkpoints) if entries is None else EntrySurface(entries, mode)
