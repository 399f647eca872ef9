"""The `langgraph` backend against real LangGraph stores (in memory and SQLite with sqlite-vec),
with turns stored as they are or extracted by LangMem's manager driven by
fake:langmem-extractor, built through the registry as a run builds it."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.extras import reason

pytest.importorskip("langmem", reason=reason("langgraph"))

from lme_bench.backends.configured import open_system
from lme_bench.backends.langgraph_store import LangGraphSystem, LangMemSystem
from lme_bench.backends.langgraph_stores import DATABASE_NAME
from lme_bench.backends.langmem_fake_model import user_messages
from lme_bench.backends.protocol import Capability, Hit, MemorySystem, Session, Turn
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.conformance import MemorySystemConformance

T = TypeVar("T")
QUESTION_DATE = "2023/09/01 (Fri) 12:00"


def _session(key: str, date: str, *texts: str) -> Session:
    roles = ("user", "assistant")
    return Session(key, date, tuple(Turn(i, roles[i % 2], text) for i, text in enumerate(texts)))


GREYHOUND = _session(
    "s000",
    "2023/05/20 (Sat) 02:21",
    "I adopted a greyhound named Pixel last spring.",
    "Greyhounds are gentle companions.",
    "Pixel loves sleeping on the orange sofa.",
    "   ",  # empty turns are not stored
)
LISBON = _session(
    "s001",
    "2023/06/02 (Fri) 18:05",
    "My sister Marguerite moved to Lisbon for a cartography job.",
    "Lisbon is lovely in June.",
)
KAYAK = _session(
    "s.002",
    "2023/07/14 (Fri) 09:40",
    "I bought a turquoise kayak from a shop in Bergen.",
    "Enjoy paddling!",
    "The kayak weighs twenty kilograms.",
    "Quite light for a kayak.",
)
SESSIONS = {s.key: s for s in (GREYHOUND, LISBON, KAYAK)}
GIVEN = {turn.content for s in SESSIONS.values() for turn in s.turns}
COMBINATIONS = [
    ("memory", "none"),
    ("sqlite", "none"),
    ("memory", "langmem"),
    ("sqlite", "langmem"),
]


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def _settings(tmp_path: Path, **params: Any) -> Settings:
    return Settings(
        memory={"backend": "langgraph", "params": params},
        run={"results_dir": tmp_path},
        models={"memory": "fake:langmem-extractor"},
    )


def _stored(extract: str, session: Session) -> list[Turn]:
    """The turns whose text the memory holds: every non-empty turn, or the user's (LangMem)."""
    kept = [t for t in session.turns if t.content.strip()]
    return [t for t in kept if t.role == "user"] if extract == "langmem" else kept


async def _search(system: MemorySystem, memory_id: str, query: str, k: int) -> list[Hit]:
    return await system.search(memory_id, query, question_date=QUESTION_DATE, k=k)


@pytest.mark.slow
@pytest.mark.parametrize(("store", "extract"), COMBINATIONS)
def test_ingest_search_reingest_and_delete(tmp_path: Path, store: str, extract: str) -> None:
    settings = _settings(tmp_path, store=store, extract=extract)

    async def check() -> None:
        writer = open_system(settings)
        assert type(writer) is (LangMemSystem if extract == "langmem" else LangGraphSystem)
        first = await writer.open_memory("title.one")
        second = await writer.open_memory("title-two")
        for session in (GREYHOUND, LISBON):
            await writer.ingest_session(first, session)
        await writer.ingest_session(second, KAYAK)
        await writer.wait_until_ready(first)
        used = writer.usage()
        await writer.close()
        if extract == "none":  # one batch per session, one text per stored turn
            assert (used.model_calls, used.embedding_calls) == (0, 3)
            assert used.embedded_texts == sum(len(_stored("none", s)) for s in SESSIONS.values())
        else:  # one manager call per session, counted through [models] memory's account
            assert used.model_calls == 3 and used.input_tokens > 0 and used.output_tokens > 0
            assert used.embedding_calls >= 3

        # Ingestion and search use different backend objects, as in a run.
        reader = open_system(settings)
        assert await reader.open_memory("title.one") == first
        held = {s.key: len(_stored(extract, s)) for s in SESSIONS.values()}
        everything = await _search(reader, first, "pets and family", 50)
        assert len(everything) == held["s000"] + held["s001"]
        assert len(await _search(reader, second, "pets and family", 50)) == held["s.002"]
        for memory_id, keys in ((first, {"s000", "s001"}), (second, {"s.002"})):
            for query in ("greyhound", "Lisbon", "kayak"):
                for hit in await _search(reader, memory_id, query, 50):
                    assert hit.session_key in keys, (memory_id, hit)  # memories are isolated
                    session = SESSIONS[hit.session_key]
                    assert hit.date == session.date
                    assert hit.text in GIVEN  # nothing the memory was not given
                    if extract == "none":
                        assert hit.text == session.turns[hit.turn_index or 0].content
                        assert hit.turn_index is not None
                    else:
                        assert hit.turn_index is None
                        assert hit.text in {t.content for t in _stored(extract, session)}
        best = (await _search(reader, first, "Marguerite cartography Lisbon", 1))[0]
        assert best.session_key == "s001" and "Marguerite" in best.text

        deep = await _search(reader, first, "greyhound", 50)
        assert [h.score for h in deep] == sorted((h.score for h in deep), reverse=True)
        for k in (1, 2, 3):  # k when it holds more, the best k first
            hits = await _search(reader, first, "greyhound", k)
            assert [h.text for h in hits] == [h.text for h in deep[:k]]
        assert await _search(reader, first, "greyhound", 0) == []

        await reader.ingest_session(first, GREYHOUND)  # a retried session stores nothing twice
        again = await _search(reader, first, "pets and family", 50)
        assert sorted((h.text, h.session_key) for h in again) == sorted(
            (h.text, h.session_key) for h in everything
        )
        assert reader.usage().model_calls == (1 if extract == "langmem" else 0)

        await reader.delete_memory(first)
        assert await _search(reader, first, "greyhound", 10) == []
        assert len(await _search(reader, second, "kayak", 10)) == held["s.002"]
        await reader.close()

    _run(check())
    databases = list((tmp_path / "backends").glob(f"*/{DATABASE_NAME}"))
    assert len(databases) == (1 if store == "sqlite" else 0)


def test_the_extractor_answers_langmems_prompt(tmp_path: Path) -> None:
    settings = _settings(tmp_path, store="memory", extract="langmem")

    async def check() -> None:
        system = open_system(settings)
        await system.ingest_session(await system.open_memory("prompt"), KAYAK)
        calls = system.env.chat_model.inner.calls  # type: ignore[attr-defined]
        assert [call.tools for call in calls] == [["Memory"]]
        prompt = "\n".join(str(m.content) for m in calls[0].messages)
        assert user_messages(prompt) == [t.content for t in _stored("langmem", KAYAK)]
        assert "2023/07/14 (Fri) 09:40" in prompt  # LangMem is told the session's date
        await system.close()

    _run(check())


def test_sqlite_memory_survives_closing_every_backend(tmp_path: Path) -> None:
    settings = _settings(tmp_path, store="sqlite")

    async def check() -> None:
        writer = open_system(settings)
        await writer.ingest_session(await writer.open_memory("kept"), LISBON)
        await writer.close()  # the last user: the connection is closed
        reader = open_system(settings)
        hits = await _search(reader, await reader.open_memory("kept"), "Lisbon", 5)
        assert {h.session_key for h in hits} == {"s001"} and len(hits) == 2
        await reader.close()

    _run(check())


def test_one_in_memory_store_serves_backends_in_several_threads(tmp_path: Path) -> None:
    """As the flow runs questions: each thread its own event loop and backend object."""
    settings = _settings(tmp_path, store="memory")

    async def fill_and_search(title: str) -> list[Hit]:
        system = open_system(settings)
        memory_id = await system.open_memory(title)
        for session in SESSIONS.values():
            await system.ingest_session(memory_id, session)
        hits = await _search(system, memory_id, "kayak", 100)
        await system.close()
        return hits

    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda t: _run(fill_and_search(t)), ["a", "b", "c", "d"]))
    for hits in found:
        assert sorted(h.text for h in hits) == sorted(t for t in GIVEN if t.strip())


def test_capabilities_follow_extraction() -> None:
    assert Capability.TURN_PROVENANCE in LangGraphSystem.capabilities
    assert Capability.EXTRACTS not in LangGraphSystem.capabilities
    assert Capability.EXTRACTS in LangMemSystem.capabilities
    assert Capability.TURN_PROVENANCE not in LangMemSystem.capabilities
    for cls in (LangGraphSystem, LangMemSystem):
        assert {Capability.PROVENANCE, Capability.DELETES} <= cls.capabilities


def test_bad_params_and_a_missing_memory_model_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[memory\.params\] stor"):
        open_system(_settings(tmp_path, stor="memory"))
    with pytest.raises(ConfigError, match=r"\[memory\.params\] extract"):
        open_system(_settings(tmp_path, extract="mem0"))
    settings = Settings(
        memory={
            "backend": "langgraph",
            "params": {"store": "memory", "extract": "langmem"},
        },
        run={"results_dir": tmp_path},
    )
    with pytest.raises(ConfigError, match=r"\[models\] memory"):
        open_system(settings)


@pytest.mark.slow
class TestConformanceSqliteTurns(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        return open_system(_settings(data_dir, store="sqlite"))


@pytest.mark.slow
class TestConformanceInMemoryLangMem(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        return open_system(_settings(data_dir, store="memory", extract="langmem"))
