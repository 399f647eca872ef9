"""The graphiti backend: real Graphiti on real embedded Kuzu files, the packaged MiniLM, and
fake:graphiti-extractor as the memory model, built through the registry from a Settings."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.extras import reason

pytest.importorskip("graphiti_core", reason=reason("graphiti"))

from graphiti_core.prompts.extract_edges import EdgeTimestamps
from graphiti_core.prompts.models import Message

from lme_bench.backends.configured import open_system
from lme_bench.backends.graphiti import GraphitiSystem, group_id_for, session_time
from lme_bench.backends.graphiti_clients import ChatModelLLMClient, StructuredReplyError
from lme_bench.backends.protocol import Capability, MemorySystem, Session, Turn, Usage
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.conformance import MemorySystemConformance
from lme_bench.providers.accounted_chat import AccountedChatModel
from lme_bench.providers.fake import ScriptedChatModel

T = TypeVar("T")
QUESTION_DATE = "2023/09/01 (Fri) 12:00"


def _session(key: str, date: str, *lines: str) -> Session:
    roles = ("user", "assistant")
    return Session(key, date, tuple(Turn(i, roles[i % 2], text) for i, text in enumerate(lines)))


TREK = _session(
    "k-3f1",
    "2023/05/20 (Sat) 02:21",
    "I bought a red Trek bike in Boston last week. My sister Anna rides it too.",
    "Trek makes sturdy frames.",
    "The bike has a wicker basket.",
    "",
    "Baskets are handy for groceries.",
)
LISBON = _session(
    "k-8c2",
    "2023/06/02 (Fri) 18:05",
    "We visited Lisbon with Anna in June. The Alfama district was lovely.",
    "Lisbon is beautiful in early summer.",
)
KAYAK = _session(
    "k-d47",
    "2023/07/14 (Fri) 09:40",
    "I paddled a turquoise kayak around Bergen harbour.",
    "Bergen is rainy, so a drysuit helps.",
)
ALPHA, BETA = (TREK, LISBON), (KAYAK,)


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def _settings(root: Path, **params: Any) -> Settings:
    return Settings(
        memory={
            "backend": "graphiti",
            "params": params,
            "embedding_model": "all-MiniLM-L6-v2",
        },
        run={"results_dir": root},
        models={"memory": "fake:graphiti-extractor"},
    )


async def _facts(system: MemorySystem, memory_id: str) -> list[dict[str, Any]]:
    """Every fact, entity and episode Graphiti holds for the memory, read from Kuzu."""
    assert isinstance(system, GraphitiSystem)
    driver = (await system._graph(memory_id)).driver
    rows: list[dict[str, Any]] = []
    for query in (
        "MATCH (n:RelatesToNode_) WHERE n.group_id = $g RETURN 'fact' AS kind, n.fact AS text",
        "MATCH (n:Entity) WHERE n.group_id = $g RETURN 'entity' AS kind, n.name AS text",
        "MATCH (n:Entity) WHERE n.group_id = $g RETURN 'summary' AS kind, n.summary AS text",
        "MATCH (n:Episodic) WHERE n.group_id = $g RETURN 'episode' AS kind, n.name AS text",
        "MATCH (n:Episodic) WHERE n.group_id = $g RETURN 'content' AS kind, n.content AS text",
    ):
        found, _, _ = await driver.execute_query(query, g=memory_id)
        rows += [row for row in found if isinstance(row, dict)]
    return rows


@dataclass
class Ingested:
    root: Path
    alpha: str
    beta: str
    per_episode: list[Usage]
    facts_before_again: list[dict[str, Any]]
    facts_after_again: list[dict[str, Any]]
    usage: Usage
    account_calls: int


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    root = tmp_path_factory.mktemp("graphiti")

    async def fill() -> Ingested:
        system = open_system(_settings(root))
        assert isinstance(system, GraphitiSystem)
        alpha = await system.open_memory("question alpha")
        beta = await system.open_memory("question beta")
        per_episode = []
        for memory_id, sessions in ((alpha, ALPHA), (beta, BETA)):
            for session in sessions:
                before = system.usage()
                await system.ingest_session(memory_id, session)
                after = system.usage()
                per_episode.append(
                    Usage(
                        model_calls=after.model_calls - before.model_calls,
                        embedding_calls=after.embedding_calls - before.embedding_calls,
                        embedded_texts=after.embedded_texts - before.embedded_texts,
                    )
                )
            await system.wait_until_ready(memory_id)
        facts_before = await _facts(system, alpha)
        await system.ingest_session(alpha, TREK)  # a retried question resends its session
        await system.wait_until_ready(alpha)
        facts_after = await _facts(system, alpha)
        usage = system.usage()
        account_calls = system.chat_model.account.calls
        await system.close()
        return Ingested(
            root, alpha, beta, per_episode, facts_before, facts_after, usage, account_calls
        )

    return _run(fill())


async def _search(root: Path, memory: str, query: str, k: int) -> list[Any]:
    """A search from a new backend object, as a later stage of the question makes it."""
    system = open_system(_settings(root))
    try:
        memory_id = await system.open_memory(memory)
        return await system.search(memory_id, query, question_date=QUESTION_DATE, k=k)
    finally:
        await system.close()


@pytest.mark.slow
def test_many_stages_open_one_memory_at_once(ingested: Ingested) -> None:
    """A shared build's questions are searched together, each stage with its own backend
    object over the memory's database: 24 of them hold it open in one process at once (with
    Kuzu's default 8 TiB reservation a database, the 16th failed to map)."""

    async def searches() -> list[list[Any]]:
        systems = [open_system(_settings(ingested.root)) for _ in range(24)]
        try:
            ids = [await system.open_memory("question alpha") for system in systems]
            found = [
                system.search(memory_id, "Lisbon trip", question_date=QUESTION_DATE, k=1)
                for system, memory_id in zip(systems, ids, strict=True)
            ]
            return await asyncio.gather(*found)
        finally:
            for system in systems:
                await system.close()

    assert all(hits and hits[0].session_key == LISBON.key for hits in _run(searches()))


@pytest.mark.slow
def test_search_finds_facts_with_their_session_and_date(ingested: Ingested) -> None:
    for query, session, word in (
        ("Which bike did I buy?", TREK, "Trek"),
        ("Lisbon trip", LISBON, "Lisbon"),
    ):
        hits = _run(_search(ingested.root, "question alpha", query, 3))
        best = next(hit for hit in hits if word in hit.text)
        assert best.session_key == session.key and best.date == session.date, hits
        assert best.turn_index is None  # facts span turns: no turn provenance is claimed
        assert any(best.text in turn.content for turn in session.turns)
    assert Capability.TURN_PROVENANCE not in GraphitiSystem.capabilities


@pytest.mark.slow
def test_memories_are_isolated(ingested: Ingested) -> None:
    for hit in _run(_search(ingested.root, "question beta", "Trek bike Lisbon Anna", 20)):
        assert hit.session_key == KAYAK.key, hit
        assert "Trek" not in hit.text and "Lisbon" not in hit.text
    for hit in _run(_search(ingested.root, "question alpha", "kayak Bergen", 20)):
        assert hit.session_key in {TREK.key, LISBON.key} and "Bergen" not in hit.text


@pytest.mark.slow
def test_search_returns_k_best_first_when_it_holds_more(ingested: Ingested) -> None:
    held = sum(row["kind"] == "fact" for row in ingested.facts_after_again)
    deep = _run(_search(ingested.root, "question alpha", "Anna", 50))
    assert len(deep) == held > 3  # no threshold: every fact comes back at depth 50
    assert [hit.score for hit in deep] == sorted((hit.score for hit in deep), reverse=True)
    for k in (1, 2, 3):
        hits = _run(_search(ingested.root, "question alpha", "Anna", k))
        assert [hit.text for hit in hits] == [hit.text for hit in deep[:k]]


@pytest.mark.slow
def test_ingesting_a_session_again_stores_nothing_twice(ingested: Ingested) -> None:
    def held(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return sorted((row["kind"], row["text"]) for row in rows if row["kind"] != "summary")

    assert held(ingested.facts_after_again) == held(ingested.facts_before_again)
    episodes = [row["text"] for row in ingested.facts_after_again if row["kind"] == "episode"]
    assert sorted(episodes) == sorted(session.key for session in ALPHA)


@pytest.mark.slow
def test_stores_only_what_it_was_given(ingested: Ingested) -> None:
    given = "\n".join(turn.content for session in ALPHA for turn in session.turns)
    for row in ingested.facts_after_again:
        text = row["text"] or ""
        if row["kind"] == "episode":
            assert text in {session.key for session in ALPHA}
        elif row["kind"] == "content":
            assert all(line.split(": ", 1)[1] in given for line in text.splitlines())
        elif row["kind"] == "entity":
            assert text in {"user", "assistant"} or text in given, row
        elif row["kind"] == "fact":
            assert text in given, row
        else:  # Graphiti joins and shortens the summaries it is given: words of the sessions
            assert set(re.findall(r"\w+", text)) <= set(re.findall(r"\w+", given)), row
    kayak = KAYAK.turns[0].content
    assert not any(kayak in (row["text"] or "") for row in ingested.facts_after_again)


@pytest.mark.slow
def test_usage_counts_the_model_and_embedding_calls(ingested: Ingested) -> None:
    # Per episode: entity and fact extraction at least (plus entity summaries, and a duplicate
    # check per fact that resembles a stored one), and four embedding batches.
    for episode in ingested.per_episode:
        assert episode.model_calls >= 2 and episode.embedding_calls >= 3
    assert ingested.usage.model_calls == ingested.account_calls  # env.chat_model's account
    assert ingested.usage.model_calls >= sum(e.model_calls for e in ingested.per_episode) + 2
    assert ingested.usage.input_tokens > 0 and ingested.usage.output_tokens > 0
    assert ingested.usage.embedded_texts >= ingested.usage.embedding_calls > 0


@pytest.mark.slow
class TestGraphitiConformance(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        return open_system(_settings(data_dir))


@pytest.mark.slow
def test_delete_removes_the_memory_and_its_file(tmp_path: Path) -> None:
    async def check() -> None:
        system = open_system(_settings(tmp_path))
        memory_id = await system.open_memory("question gamma")
        await system.ingest_session(memory_id, KAYAK)
        database = tmp_path / "backends"
        assert list(database.rglob(f"{memory_id}.kuzu"))
        await system.delete_memory(memory_id)
        assert not list(database.rglob(f"{memory_id}.kuzu"))
        await system.close()
        assert await _search(tmp_path, "question gamma", "kayak Bergen", 10) == []

    _run(check())


def test_a_bad_param_is_a_config_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="candidatez"):
        open_system(_settings(tmp_path, candidatez=10))
    with pytest.raises(ConfigError, match="json_retries"):
        open_system(_settings(tmp_path, json_retries=-1))


def test_without_a_memory_model_the_error_names_the_setting(tmp_path: Path) -> None:
    settings = Settings(memory={"backend": "graphiti"}, run={"results_dir": tmp_path})
    with pytest.raises(ConfigError, match=r"\[models\] memory"):
        open_system(settings)


def test_group_ids_follow_graphiti_rules_and_differ_by_title_and_scope() -> None:
    ids = {group_id_for(t, s) for t in ("q 1", "q/1", "ü…", "") for s in ("", "scope")}
    assert len(ids) == 8
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", group_id) for group_id in ids)


def test_session_dates_parse_in_longmemeval_format() -> None:
    moment = session_time("2023/05/20 (Sat) 02:21")
    assert (moment.year, moment.month, moment.day, moment.hour, moment.minute) == (
        2023,
        5,
        20,
        2,
        21,
    )
    assert moment.utcoffset() is not None
    with pytest.raises(ValueError):
        session_time("sometime in May")


def test_the_model_is_asked_again_when_its_reply_does_not_fit_the_schema() -> None:
    async def ask(model: AccountedChatModel, retries: int) -> dict[str, Any]:
        client = ChatModelLLMClient(model, json_retries=retries)
        messages = [Message(role="system", content="s"), Message(role="user", content="u")]
        return await client.generate_response(messages, response_model=EdgeTimestamps)

    fitting = '```json\n{"valid_at": "2023-05-20T00:00:00Z", "invalid_at": null}\n```'
    inner = ScriptedChatModel(script=["no JSON here", '{"valid_at": 7}', fitting])
    model = AccountedChatModel(inner=inner)
    assert _run(ask(model, 2)) == {"valid_at": "2023-05-20T00:00:00Z", "invalid_at": None}
    assert model.account.calls == 3  # every attempt went through the accounted model
    assert "no JSON object" in str(inner.calls[1].messages[-1].content)
    assert "does not fit the schema" in str(inner.calls[2].messages[-1].content)

    stubborn = AccountedChatModel(inner=ScriptedChatModel(script=['{"valid_at": 7}']))
    with pytest.raises(StructuredReplyError, match="schema"):
        _run(ask(stubborn, 0))
    assert stubborn.account.calls == 1
