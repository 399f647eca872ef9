"""The optional surfaces a memory system declares in `capabilities`, as typed objects.

Stages ask for them here, never by attribute name: a system that declares a capability without
the surface it promises fails with one error naming it.
- ENTRIES: `entry_memory`, the entries-and-context surface of Mycelian-shaped systems
  (lme_bench.entries.EntryMemory), which the memory agent writes to in the `agentic` and
  `context-only` ingestion modes and which keeps context documents;
- AGENT_TOOLS: `agent_tools(memory_id)`, the system's own tools for one memory, for the memory
  agent of systems without an entry surface.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from lme_bench.backends.protocol import Capability, MemorySystem
from lme_bench.entries.entry_memory import EntryMemory


@runtime_checkable
class WithEntryMemory(Protocol):
    """A system with Capability.ENTRIES."""

    @property
    def entry_memory(self) -> EntryMemory: ...


@runtime_checkable
class WithAgentTools(Protocol):
    """A system with Capability.AGENT_TOOLS."""

    async def agent_tools(self, memory_id: str) -> list[Any]:
        """The system's tools for one memory, as LangChain tools."""
        ...


class CapabilityError(TypeError):
    """A system declares a capability but lacks the surface it promises (a permanent error)."""


def entry_memory_of(system: MemorySystem) -> EntryMemory | None:
    """The system's entry surface, or None when it declares none."""
    if Capability.ENTRIES not in system.capabilities:
        return None
    if not isinstance(system, WithEntryMemory):
        raise CapabilityError(
            f"memory system {system.name!r} declares the {Capability.ENTRIES.value!r}"
            " capability but has no `entry_memory`"
        )
    return system.entry_memory


def agent_tools_of(system: MemorySystem) -> WithAgentTools | None:
    """The system as a source of agent tools, or None when it declares none."""
    if Capability.AGENT_TOOLS not in system.capabilities:
        return None
    if not isinstance(system, WithAgentTools):
        raise CapabilityError(
            f"memory system {system.name!r} declares the {Capability.AGENT_TOOLS.value!r}"
            " capability but has no `agent_tools(memory_id)`"
        )
    return system
