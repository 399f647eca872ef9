"""The checks of the memory-system protocol (lme_bench.backends.protocol), as a pytest base
class: subclass it as `Test...`, define `make_system`, and pytest runs every check.

Each check fails with a message saying what was expected and what the backend did (pytest does
not rewrite the asserts of an installed package, so a bare assert would say nothing).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from lme_bench.backends.protocol import (
    BackendParams,
    Capability,
    Hit,
    MemorySystem,
    Session,
)
from lme_bench.backends.registry import backend_env, build_backend
from lme_bench.config.settings import Settings, load_settings
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


class _FromSettings:
    """The default of build_system's overrides: what the settings give."""

    def __repr__(self) -> str:
        return "<from the settings>"


_UNSET: Any = _FromSettings()


def build_system(
    cls: type[Any],
    params: dict[str, Any],
    data_dir: Path,
    *,
    settings: Settings | str | Path | None = None,
    chat_model: Any | None = _UNSET,
    embedder: Callable[[], Any] | None = _UNSET,
) -> MemorySystem:
    """A backend built as a run builds it (lme_bench.backends.registry.backend_env and
    build_backend), over `data_dir` instead of the run's folder: its params checked by its
    `Params`, `env.embedder` the configured embedding model (the packaged MiniLM unless
    `[memory] embedding_model` says otherwise) and `env.chat_model` the `[models] memory`
    model when one is set. `settings` is a run config (a path to its TOML, or Settings);
    the default is the default config. `chat_model` and `embedder` replace what the settings
    give, for a test that needs a stand-in."""
    if not isinstance(settings, Settings):
        settings = load_settings(Path(settings) if settings is not None else None)
    env = backend_env(settings, data_dir=data_dir)
    if chat_model is not _UNSET:
        env = replace(env, chat_model=chat_model)
    if embedder is not _UNSET:
        env = replace(env, embedder=embedder)
    return build_backend(cls, params, env)


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def _mentions(hit: Hit, word: str) -> bool:
    return word in hit.text.lower()


def _shown(hits: list[Hit]) -> str:
    """Hits as a message shows them: key, turn, date and the start of the text."""
    if not hits:
        return "no hits"
    return "; ".join(
        f"[{i}] session_key={h.session_key!r} turn_index={h.turn_index!r} date={h.date!r}"
        f" text={h.text[:60]!r}"
        for i, h in enumerate(hits)
    )


def _expect(ok: object, message: str) -> None:
    """Fail the check with `message` unless `ok`."""
    if not ok:
        pytest.fail(message, pytrace=False)


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
        hits = await system.search(memory_id, query, question_date=QUESTION_DATE, k=k)
        _expect(
            isinstance(hits, list) and all(isinstance(h, Hit) for h in hits),
            f"search({query!r}, k={k}) must return a list of Hit; it returned {hits!r}",
        )
        return hits

    def test_declares_what_it_is(self, tmp_path: Path) -> None:
        system = self.make_system(tmp_path)
        cls = type(system)
        params = getattr(cls, "Params", None)
        _expect(
            isinstance(params, type) and issubclass(params, BackendParams),
            f"{cls.__name__}.Params must be a BackendParams subclass; it is {params!r}",
        )
        name = getattr(cls, "name", None)
        _expect(
            isinstance(name, str) and name,
            f"{cls.__name__}.name must be a non-empty string; it is {name!r}",
        )
        capabilities = getattr(cls, "capabilities", None)
        _expect(
            isinstance(capabilities, frozenset | set)
            and all(isinstance(c, Capability) for c in capabilities),
            f"{cls.__name__}.capabilities must be a frozenset of Capability members; it is"
            f" {capabilities!r}",
        )
        caps = capabilities or frozenset()
        if Capability.ENTRIES in caps:
            _expect(
                hasattr(system, "entries") or hasattr(system, "entry_memory"),
                f"{cls.__name__} declares ENTRIES but has no `entries` attribute",
            )
        if Capability.TURN_PROVENANCE in caps:
            _expect(
                Capability.PROVENANCE in caps,
                f"{cls.__name__} declares TURN_PROVENANCE, which needs PROVENANCE too; it"
                f" declares {sorted(caps)}",
            )
        _run(system.close())

    def test_a_memory_reopens_by_title_from_a_new_backend_object(self, tmp_path: Path) -> None:
        async def check() -> None:
            first, memory_id = await self._filled(tmp_path, "lme-conf-reopen", (GREYHOUND,))
            other = await first.open_memory("lme-conf-other")
            await first.close()
            second = self.make_system(tmp_path)
            try:
                again = await second.open_memory("lme-conf-reopen")
                _expect(
                    again == memory_id,
                    "open_memory with the same title on a new backend object over the same"
                    f" folder must return the same id: first {memory_id!r}, then {again!r}",
                )
                _expect(
                    other != memory_id,
                    f"two titles must give two memory ids; both gave {memory_id!r}",
                )
                hits = await self._search(second, memory_id, "greyhound", 5)
                _expect(
                    any(_mentions(hit, "greyhound") for hit in hits),
                    "after reopening, search('greyhound') must find the ingested session that"
                    f" mentions it; it returned {_shown(hits)}",
                )
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
                for memory_id, word, session in (
                    (second, "greyhound", GREYHOUND),
                    (first, "lisbon", LISBON),
                ):
                    hits = await self._search(system, memory_id, word, 10)
                    leaked = [h for h in hits if _mentions(h, word) or h.session_key == session.key]
                    _expect(
                        not leaked,
                        f"search({word!r}) in memory {memory_id!r} must not return session"
                        f" {session.key!r}, ingested into another memory; it returned"
                        f" {_shown(leaked)}",
                    )
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
                    _expect(
                        any(_mentions(hit, word) for hit in hits),
                        f"search({word!r}, k=5) must return a hit whose text mentions it"
                        f" (session {key!r}); it returned {_shown(hits)}",
                    )
                    for hit in hits:
                        _expect(
                            hit.date is None or hit.date in DATES.values(),
                            f"a hit's date must be its session's date as ingested (one of"
                            f" {sorted(DATES.values())}) or None; search({word!r}) returned"
                            f" {_shown([hit])}",
                        )
                        if provenance:
                            _expect(
                                hit.session_key in DATES,
                                "with PROVENANCE every hit's session_key must be the key of an"
                                f" ingested session ({sorted(DATES)}); search({word!r})"
                                f" returned {_shown([hit])}",
                            )
                            _expect(
                                hit.date == DATES[str(hit.session_key)],
                                f"with PROVENANCE a hit's date must be its session's date"
                                f" {DATES.get(str(hit.session_key))!r}; search({word!r})"
                                f" returned {_shown([hit])}",
                            )
                    if provenance:
                        best = next(hit for hit in hits if _mentions(hit, word))
                        _expect(
                            best.session_key == key,
                            f"the best hit mentioning {word!r} must name session {key!r};"
                            f" it names {best.session_key!r}",
                        )
            finally:
                await system.close()

        _run(check())

    def test_search_returns_at_most_k_and_k_when_it_holds_more(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-depth")
            try:
                for query in ("kayak", "greyhound Lisbon kayak violin"):
                    deep = await self._search(system, memory_id, query, 50)
                    _expect(
                        len(deep) <= 50,
                        f"search({query!r}, k=50) must return at most 50 hits; it returned"
                        f" {len(deep)}",
                    )
                    for k in (1, 2, 3):
                        hits = await self._search(system, memory_id, query, k)
                        _expect(
                            len(hits) == min(k, len(deep)),
                            f"search({query!r}, k={k}) must return min(k, what k=50 returns)"
                            f" = {min(k, len(deep))} hits, with no score threshold; it"
                            f" returned {len(hits)}: {_shown(hits)}",
                        )
                        _expect(
                            [h.text for h in hits] == [h.text for h in deep[:k]],
                            f"search({query!r}, k={k}) must return the first {k} hits of"
                            f" k=50, in the same order; it returned {_shown(hits)}, k=50"
                            f" began {_shown(deep[:k])}",
                        )
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
                after = await snapshot(system, memory_id)
                _expect(
                    after == before,
                    "ingesting sessions again (same keys) must not add anything: searches"
                    f" returned {len(before)} hits before and {len(after)} after; added:"
                    f" {list((Counter(after) - Counter(before)).elements())[:5]}",
                )
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
                _expect(hits, "search('Ottoline violin') must find the violin session's turns")
                for hit in hits:
                    session = sessions.get(str(hit.session_key))
                    _expect(
                        session is not None
                        and hit.turn_index is not None
                        and 0 <= hit.turn_index < len(session.turns),
                        "with TURN_PROVENANCE every hit must name an ingested session and one"
                        f" of its turns; got {_shown([hit])}",
                    )
                    if session is None or hit.turn_index is None:
                        continue  # failed above
                    turn = session.turns[hit.turn_index]
                    if Capability.EXTRACTS not in caps:
                        _expect(
                            turn.content in hit.text,
                            "without EXTRACTS a hit's text must contain the turn it names:"
                            f" turn {hit.turn_index} of {session.key!r} is {turn.content!r};"
                            f" the hit's text is {hit.text!r}",
                        )
            finally:
                await system.close()

        _run(check())

    def test_delete_removes_the_memory_where_declared(self, tmp_path: Path) -> None:
        async def check() -> None:
            system, memory_id = await self._filled(tmp_path, "lme-conf-delete", (VIOLIN,))
            try:
                if Capability.DELETES not in type(system).capabilities:
                    try:
                        await system.delete_memory(memory_id)
                    except NotImplementedError:
                        return
                    pytest.fail(
                        "without DELETES, delete_memory must raise NotImplementedError; it"
                        " returned",
                        pytrace=False,
                    )
                await system.delete_memory(memory_id)
            finally:
                await system.close()
            again = self.make_system(tmp_path)
            try:
                reopened = await again.open_memory("lme-conf-delete")
                await again.wait_until_ready(reopened)
                hits = await self._search(again, reopened, "violin Ottoline", 10)
                _expect(
                    hits == [],
                    "after delete_memory, the memory reopened by its title must be empty;"
                    f" search('violin Ottoline') returned {_shown(hits)}",
                )
            finally:
                await again.close()

        _run(check())
