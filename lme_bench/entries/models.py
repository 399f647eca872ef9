"""Plain data shapes shared by every memory backend (names follow Mycelian's tool surface)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Vault:
    vault_id: str
    title: str
    description: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Memory:
    memory_id: str
    vault_id: str
    title: str
    memory_type: str
    description: str
    created_at: str


@dataclass(frozen=True, slots=True)
class NewEntry:
    raw_entry: str
    summary: str
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Entry:
    entry_id: str
    memory_id: str
    raw_entry: str
    summary: str
    tags: dict[str, str]
    creation_time: str


@dataclass(frozen=True, slots=True)
class EntryHit:
    entry_id: str
    summary: str
    raw_entry: str | None
    score: float
    creation_time: str
    tags: dict[str, str]


@dataclass(frozen=True, slots=True)
class ContextHit:
    context: str
    timestamp: str
    score: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    entries: list[EntryHit]
    contexts: list[ContextHit]
    latest_context: str | None
    latest_context_timestamp: str | None
    mode: str = "bm25"  # which search ran: "bm25", "dense" or "hybrid"
