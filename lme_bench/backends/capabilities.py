"""The optional surfaces a memory system declares in `capabilities`, as typed objects.

Stages ask for them here, never by attribute name: a system that declares a capability without
the surface it promises fails with one error naming it.
- ENTRIES: `entries`, the entries-and-context surface of Mycelian-shaped systems, by memory id
  (lme_bench.entries.capability.Entries), which the memory agent writes to in the `agentic` and
  `context-only` ingestion modes and which keeps context documents. A system written before
  `entries` existed offers `entry_memory`, a vaulted EntryMemory: it is bound to the default
  vault (one per host), as the stages used it then;
- AGENT_TOOLS: `agent_tools(memory_id)`, the system's own tools for one memory, for the memory
  agent of systems without an entry surface.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from lme_bench.backends.protocol import Capability, MemorySystem
from lme_bench.backends.vaults import vault_title
from lme_bench.entries.capability import Entries, VaultEntries
from lme_bench.entries.entry_memory import EntryMemory


@runtime_checkable
class WithEntries(Protocol):
    """A system with Capability.ENTRIES."""

    @property
    def entries(self) -> Entries: ...


@runtime_checkable
class WithEntryMemory(Protocol):
    """A system with Capability.ENTRIES as it was offered before `entries`: a vaulted store."""

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


def entries_of(system: MemorySystem) -> Entries | None:
    """The system's entry surface, or None when it declares none."""
    if Capability.ENTRIES not in system.capabilities:
        return None
    if isinstance(system, WithEntries):
        return system.entries
    if isinstance(system, WithEntryMemory):
        return VaultEntries(system.entry_memory, vault_title(None))
    raise CapabilityError(
        f"memory system {system.name!r} declares the {Capability.ENTRIES.value!r}"
        " capability but has no `entries`"
    )


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
