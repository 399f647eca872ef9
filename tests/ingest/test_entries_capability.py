"""Ingestion talks to the memory system alone: a plug-in that offers the entries capability as
`entries` (memories by id, no vaults in sight) is ingested raw and through the memory agent,
counted, checked and excerpted through it; one written against the older `entry_memory` (a
vaulted store) still is. Built-in backends are built like plug-ins: their checked
`[memory.params]` once per table, no run settings beside them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from lme_bench.backends.configured import open_system
from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.backends.entry_system import EmbeddedSystem, entry_hit, turn_entries
from lme_bench.backends.protocol import BackendEnv, BackendParams, Capability, Hit, Session, Usage
from lme_bench.backends.registry import backend_data_dir, build_backend
from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.entries.models import Entry, NewEntry, SearchResult
from lme_bench.reference_memory.store import EmbeddedStore
from lme_bench.run.steps import ingest_question, locate_memories, plan_run, prepare_questions

ROOT = Path(__file__).resolve().parents[2]
AGENTIC = ROOT / "configs" / "agentic-fake.toml"
HERE = "tests/ingest/test_entries_capability.py"


class StoreEntries:
    """The entries capability over one SQLite store, by memory id alone."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store
        self.calls: list[str] = []

    async def add_entries(self, memory_id: str, entries: Sequence[NewEntry]) -> None:
        self.calls.append("add_entries")
        self.store.add_entries(memory_id, entries)

    async def put_context(self, memory_id: str, content: str) -> None:
        self.calls.append("put_context")
        self.store.put_context(memory_id, content)

    async def get_context(self, memory_id: str) -> str | None:
        latest = self.store.latest_context(memory_id)
        return latest[0] if latest else None

    async def recent_entries(self, memory_id: str, limit: int) -> list[Entry]:
        return self.store.list_entries(memory_id, limit=limit)

    async def entry_tags(self, memory_id: str) -> list[dict[str, str]]:
        return self.store.entry_tags(memory_id)

    async def count_entries(self, memory_id: str) -> int:
        return self.store.count_entries(memory_id)

    async def await_consistency(self, memory_id: str) -> None:
        return None

    async def default_prompts(self, memory_type: str = "chat") -> dict[str, Any] | None:
        return None

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult:
        return self.store.search(memory_id, query, top_ke=top_ke, top_kc=top_kc)


class EntryNotes:
    """A plug-in with the entries capability; its vault is its own business."""

    Params: ClassVar[type[BackendParams]] = BackendParams
    name: ClassVar[str] = "entry-notes"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE, Capability.ENTRIES}
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        self.store = EmbeddedStore(env.data_dir / "entries.sqlite")
        self.entries = StoreEntries(self.store)

    async def open_memory(self, title: str) -> str:
        return self.store.get_or_create_memory(self.store.get_or_create_vault("own"), title)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        await self.entries.add_entries(memory_id, turn_entries(session))

    async def wait_until_ready(self, memory_id: str) -> None:
        return None

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        found = await self.entries.search(memory_id, query, top_ke=k, top_kc=0)
        return [entry_hit(hit) for hit in found.entries[:k]]

    async def delete_memory(self, memory_id: str) -> None:
        raise NotImplementedError

    def usage(self) -> Usage:
        return Usage()

    async def close(self) -> None:
        self.store.close()


class OlderEntryNotes(EntryNotes):
    """The same system as written before `entries`: a vaulted store as `entry_memory`, whose
    memories it opens in the default vault."""

    name = "older-entry-notes"

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        self.entry_memory = EmbeddedEntryStore(env.data_dir / "entries.sqlite")

    async def open_memory(self, title: str) -> str:
        from lme_bench.backends.vaults import vault_title

        vault = await self.entry_memory.get_or_create_vault(vault_title(None))
        return await self.entry_memory.get_or_create_memory(vault, title)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        raise AssertionError("raw ingestion writes through the entries")

    async def close(self) -> None:
        await self.entry_memory.close()


def _settings(tmp_path: Path, backend: str, config: Path | None = None) -> Settings:
    overrides = {"memory.backend": backend, "memory.params": {}}
    return load_settings(config, **{"run.results_dir": str(tmp_path), "run.id": "e", **overrides})


def _ingest(settings: Settings, limit: int = 1) -> list[Any]:
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=limit)
    located = asyncio.run(locate_memories([r.build for r in refs], settings, plan.run_id))
    return [
        asyncio.run(ingest_question(ref, settings, plan.run_id, located[ref.build])) for ref in refs
    ]


def _held(settings: Settings, memory_id: str) -> tuple[int, str | None]:
    store = EmbeddedStore(backend_data_dir(settings) / "entries.sqlite")
    try:
        latest = store.latest_context(memory_id)
        return store.count_entries(memory_id), latest[0] if latest else None
    finally:
        store.close()


@pytest.mark.parametrize("cls", ["EntryNotes", "OlderEntryNotes"])
def test_raw_ingestion_writes_turn_entries_through_the_entries_capability(
    tmp_path: Path, cls: str
) -> None:
    settings = _settings(tmp_path, f"{HERE}:{cls}")
    (outcome,) = _ingest(settings)
    assert outcome.entries > 0 and outcome.sessions
    assert _held(settings, outcome.memory_id)[0] == outcome.entries
    assert all(record.memory_calls["add_entry"] > 0 for record in outcome.sessions)
    assert outcome.ingest_health == "ok"
    assert outcome.memory_excerpt is not None and outcome.memory_excerpt.available
    assert outcome.memory_excerpt.entry_count == outcome.entries
    # The memory was found and counted before ingestion, as the ingestion left it after.
    plan = plan_run(settings)
    (located,) = asyncio.run(locate_memories([outcome.question_id], settings, plan.run_id)).values()
    assert (located.memory_id, located.entries) == (outcome.memory_id, outcome.entries)


def test_the_memory_agent_writes_entries_and_context_through_it(tmp_path: Path) -> None:
    settings = _settings(tmp_path, f"{HERE}:EntryNotes", AGENTIC)
    (outcome,) = _ingest(settings)
    entries, context = _held(settings, outcome.memory_id)
    assert entries == outcome.entries > 0 and context
    assert outcome.memory_excerpt is not None and outcome.memory_excerpt.context
    assert outcome.ingest_health == "ok"


def test_the_built_in_store_is_built_from_its_params_and_env_alone(tmp_path: Path) -> None:
    results = tmp_path / "results"
    settings = load_settings(None, **{"run.results_dir": str(results)})
    system, again = open_system(settings), open_system(settings)
    try:
        assert isinstance(system, EmbeddedSystem) and isinstance(system.store, EmbeddedEntryStore)
        # Its file: <results_dir>/memory.sqlite, found from its data folder.
        assert system.store.store.path == results / "memory.sqlite"
        assert again.params is system.params  # checked once, then shared
    finally:
        asyncio.run(system.close())
        asyncio.run(again.close())
    elsewhere = BackendEnv(data_dir=tmp_path / "somewhere", scope="")
    with pytest.raises(ConfigError, match=r"\[memory.params\] path is not set"):
        build_backend(EmbeddedSystem, {}, elsewhere)
    dense = BackendEnv(data_dir=tmp_path / "somewhere", scope="")
    with pytest.raises(ConfigError, match="gives no embedder"):
        build_backend(
            EmbeddedSystem, {"path": str(tmp_path / "m.sqlite"), "search": "dense"}, dense
        )
