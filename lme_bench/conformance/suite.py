"""The checks of the memory-system protocol (lme_bench.backends.protocol), as a pytest base
class: subclass it as `Test...`, define `make_system`, and pytest runs every check."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    MemorySystem,
    Session,
)
from lme_bench.conformance.sample_sessions import (
    ALL,
    GREYHOUND,
    KAYAK,
    LISBON,
    QUESTION_DATE,
    VIOLIN,
)

T = TypeVar("T")
WORDS = {GREYHOUND.key: "greyhound", LISBON.key: "lisbon", KAYAK.key: "kayak", VIOLIN.key: "violin"}
DATES = {session.key: session.date for session in ALL}


def build_system(
    cls: type[Any],
    params: dict[str, Any],
    data_dir: Path,
    *,
    chat_model: Any | None = None,
    embedder: Callable[[], Any] | None = None,
) -> MemorySystem:
    """A backend built as lme-bench builds it, over `data_dir`."""
    checked: BackendParams = cls.Params.model_validate(params)
    env = BackendEnv(data_dir=data_dir, scope="", chat_model=chat_model, embedder=embedder)
    system: MemorySystem = cls(checked, env)
    return system


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def _mentions(hit: Hit, word: str) -> bool:
    return word in hit.text.lower()


class MemorySystemConformance:
    """Each check builds fresh backend objects over one folder; `make_system` must return a new
    object over the same stored data each time it is called with the same folder."""

    def make_system(self, data_dir: Path) -> MemorySystem:
        raise NotImplementedError("define make_system(data_dir) in your test class")

    async def _filled(
        self, data_dir: Path, title: str, sessions: tuple[Session, ...] = ALL
    ) -> tuple[MemorySystem, str]:
        system = self.make_system(data_dir)
        memory_id = await system.open_memory(title)
        for session in sessions:
            await system.ingest_session(memory_id, session)
        await system.wait_until_ready(memory_id)
        return system, memory_id

    async def _search(self, system: MemorySystem, memory_id: str, query: str, k: int) -> list[Hit]:
        return await system.search(memory_id, query, question_date=QUESTION_DATE, k=k)

    def test_declares_what_it_is(self, tmp_path: Path) -> None:
        system = self.make_system(tmp_path)
        cls = type(system)
        assert issubclass(cls.Params, BackendParams)
        assert isinstance(cls.name, str) and cls.name
        assert all(isinstance(c, Capability) for c in cls.capabilities)
        if Capability.ENTRIES in cls.capabilities:
            assert hasattr(system, "entry_memory")
        if Capability.TURN_PROVENANCE in cls.capabilities:
            assert Capability.PROVENANCE in cls.capabilities
        _run(system.close())

    def test_a_memory_reopens_by_title_from_a_new_backend_object(self, tmp_path: Path) -> None:
        async def check() -> None:
            first, memory_id = await self._filled(tmp_path, "lme-conf-reopen", (GREYHOUND,))
            other = await first.open_memory("lme-conf-other")
            await first.close()
            second = self.make_system(tmp_path)
            try:
                assert await second.open_memory("lme-conf-reopen") == memory_id
                assert other != memory_id
                hits = await self._search(second, memory_id, "greyhound", 5)
                assert any(_mentions(hit, "greyhound") for hit in hits), hits
            finally:
                await second.close()

        _run(check())

    def test_memories_are_isolated(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, first = await self._filled(tmp_path, "lme-conf-first", (GREYHOUND,))
            second = await system.open_memory("lme-conf-second")
            await system.ingest_session(second, LISBON)
            await system.wait_until_ready(second)
            try:
                for hit in await self._search(system, second, "greyhound", 10):
                    assert not _mentions(hit, "greyhound") and hit.session_key != GREYHOUND.key
                for hit in await self._search(system, first, "Lisbon", 10):
                    assert not _mentions(hit, "lisbon") and hit.session_key != LISBON.key
            finally:
                await system.close()

        _run(check())

    def test_search_finds_each_session_and_keeps_its_date(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-find")
            provenance = Capability.PROVENANCE in type(system).capabilities
            try:
                for key, word in WORDS.items():
                    hits = await self._search(system, memory_id, word, 5)
                    assert any(_mentions(hit, word) for hit in hits), (word, hits)
                    for hit in hits:
                        assert hit.date is None or hit.date in DATES.values(), hit
                        if provenance:
                            assert hit.session_key in DATES, hit
                            assert hit.date == DATES[hit.session_key], hit
                    if provenance:
                        best = next(hit for hit in hits if _mentions(hit, word))
                        assert best.session_key == key, (word, best)
            finally:
                await system.close()

        _run(check())

    def test_search_returns_at_most_k_and_k_when_it_holds_more(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-depth")
            try:
                for query in ("kayak", "greyhound Lisbon kayak violin"):
                    deep = await self._search(system, memory_id, query, 50)
                    assert len(deep) <= 50
                    for k in (1, 2, 3):
                        hits = await self._search(system, memory_id, query, k)
                        assert len(hits) == min(k, len(deep)), (query, k, hits, deep)
                        assert [h.text for h in hits] == [h.text for h in deep[:k]]
            finally:
                await system.close()

        _run(check())

    def test_ingesting_a_session_again_stores_nothing_twice(self, tmp_path: Path) -> None:
        async def snapshot(system: MemorySystem, memory_id: str) -> list[tuple[str, Any]]:
            found = []
            for word in WORDS.values():
                hits = await self._search(system, memory_id, word, 50)
                found += [(hit.text, hit.session_key) for hit in hits]
            return sorted(found, key=repr)

        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-again")
            try:
                before = await snapshot(system, memory_id)
                await system.ingest_session(memory_id, GREYHOUND)
                await system.ingest_session(memory_id, KAYAK)
                await system.wait_until_ready(memory_id)
                assert await snapshot(system, memory_id) == before
            finally:
                await system.close()

        _run(check())

    def test_turn_provenance_names_the_turn(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-turns")
            caps = type(system).capabilities
            if Capability.TURN_PROVENANCE not in caps:
                await system.close()
                pytest.skip("the backend does not declare turn provenance")
            sessions = {session.key: session for session in ALL}
            try:
                hits = await self._search(system, memory_id, "Ottoline violin", 10)
                assert hits
                for hit in hits:
                    assert hit.session_key in sessions and hit.turn_index is not None, hit
                    turn = sessions[hit.session_key].turns[hit.turn_index]
                    if Capability.EXTRACTS not in caps:
                        assert turn.content in hit.text, (hit, turn)
            finally:
                await system.close()

        _run(check())

    def test_delete_removes_the_memory_where_declared(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-delete", (VIOLIN,))
            try:
                if Capability.DELETES not in type(system).capabilities:
                    with pytest.raises(NotImplementedError):
                        await system.delete_memory(memory_id)
                    return
                await system.delete_memory(memory_id)
            finally:
                await system.close()
            again = self.make_system(tmp_path)
            try:
                reopened = await again.open_memory("lme-conf-delete")
                await again.wait_until_ready(reopened)
                assert await self._search(again, reopened, "violin Ottoline", 10) == []
            finally:
                await again.close()

        _run(check())
