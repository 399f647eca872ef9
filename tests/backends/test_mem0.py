"""The mem0 backend against a real local mem0 (embedded Qdrant, the packaged MiniLM), its model
calls answered by fake:mem0-extractor through the registry's accounted memory model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.configured import open_system
from lme_bench.backends.mem0 import ExtractionCutError
from lme_bench.backends.mem0_fake_model import mem0_extractor, user_messages
from lme_bench.backends.protocol import Capability, Hit, MemorySystem, Session, Turn
from lme_bench.config.settings import ConfigError, Settings
from tests.extras import needs_extra

pytestmark = pytest.mark.slow  # loads sentence-transformers and a model: tens of seconds

BIKE = Session(
    key="k-7f1c",
    date="2023/05/20 (Sat) 02:21",
    turns=(
        Turn(0, "user", "I bought a red road bike last week. It cost four hundred dollars."),
        Turn(1, "assistant", "That sounds like a great purchase!"),
        Turn(2, "user", "My sister Ann helped me choose the bike."),
    ),
)
GREYHOUND = Session(
    key="k-a02e",
    date="2023/06/02 (Fri) 10:00",
    turns=(
        Turn(0, "user", "We adopted a greyhound called Pixel."),
        Turn(1, "assistant", "Greyhounds are gentle dogs."),
    ),
)
LISBON = Session(
    key="k-93bd",
    date="2023/07/11 (Tue) 18:30",
    turns=(
        Turn(0, "user", "I am flying to Lisbon in September."),
        Turn(1, "assistant", "Lisbon is lovely in autumn."),
        Turn(2, "user", "  "),
    ),
)
SESSIONS = {s.key: s for s in (BIKE, GREYHOUND, LISBON)}
QUESTION_DATE = "2023/08/01 (Tue) 09:00"


def settings(tmp_path: Path, model: str | None = "fake:mem0-extractor", **params: Any) -> Settings:
    return Settings(
        memory={"backend": "mem0", "params": params},
        run={"results_dir": tmp_path},
        models={"memory": model},
    )


async def search(system: MemorySystem, memory_id: str, query: str, k: int) -> list[Hit]:
    return await system.search(memory_id, query, question_date=QUESTION_DATE, k=k)


def given_text(*sessions: Session) -> str:
    return "\n".join(turn.content for session in sessions for turn in session.turns)


def test_fake_extractor_answers_mem0s_own_prompt() -> None:
    needs_extra("mem0")
    import json

    from langchain_core.messages import HumanMessage, SystemMessage
    from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT, generate_additive_extraction_prompt
    from mem0.memory.utils import parse_messages

    conversation = [
        {"role": "user", "content": "I live in Oslo. I have two cats!"},
        {"role": "assistant", "content": "Oslo is cold."},
        {"role": "user", "content": "Line one\nline two."},
    ]
    prompt = generate_additive_extraction_prompt(
        existing_memories=[{"id": "0", "text": "user: old"}],
        new_messages=parse_messages(conversation),
        last_k_messages=[{"role": "user", "content": "earlier words"}],
    )
    assert user_messages(prompt) == ["I live in Oslo. I have two cats!", "Line one\nline two."]
    reply = mem0_extractor([SystemMessage(ADDITIVE_EXTRACTION_PROMPT), HumanMessage(prompt)])
    memories = json.loads(str(reply.content))["memory"]
    assert [m["text"] for m in memories] == [
        "I live in Oslo.",
        "I have two cats!",
        "Line one\nline two.",
    ]
    assert [m["id"] for m in memories] == ["0", "1", "2"]
    assert {m["attributed_to"] for m in memories} == {"user"}


def test_bad_params_and_a_missing_model_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[memory.params\] infr"):
        open_system(settings(tmp_path, infr=False))
    with pytest.raises(ConfigError, match=r"\[models\] memory"):
        open_system(settings(tmp_path, model=None))


def test_infer_extracts_facts_with_session_provenance(tmp_path: Path) -> None:
    needs_extra("mem0")

    async def check() -> None:
        system = open_system(settings(tmp_path))
        assert Capability.EXTRACTS in type(system).capabilities
        assert Capability.TURN_PROVENANCE not in type(system).capabilities
        first = await system.open_memory("lme-title-first")
        second = await system.open_memory("lme-title-second")
        assert first != second
        for session in (BIKE, GREYHOUND):
            await system.ingest_session(first, session)
        await system.ingest_session(second, LISBON)
        await system.wait_until_ready(first)
        usage = system.usage()
        assert usage.model_calls == 3 and usage.input_tokens > 0 and usage.output_tokens > 0
        assert usage.embedding_calls > 0 and usage.embedded_texts >= usage.embedding_calls

        hits = await search(system, first, "what bike did I buy", 10)
        assert hits[0].session_key == BIKE.key and "bike" in hits[0].text
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        for hit in hits:
            assert hit.date == SESSIONS[hit.session_key or ""].date and hit.turn_index is None
        # one fact per user sentence: 3 from BIKE, 1 from GREYHOUND
        everything = await search(system, first, "pets and purchases", 50)
        assert len(everything) == 4
        assert {h.session_key for h in everything} == {BIKE.key, GREYHOUND.key}
        for k in (1, 2, 3):
            depth = await search(system, first, "pets and purchases", k)
            assert [h.text for h in depth] == [h.text for h in everything[:k]]
        assert all(h.text in given_text(BIKE, GREYHOUND) for h in everything)
        others = await search(system, second, "bike greyhound Lisbon", 50)
        assert [h.text for h in others] == ["I am flying to Lisbon in September."]
        assert others[0].session_key == LISBON.key

        await system.ingest_session(first, BIKE)  # a retried question resends a session
        again = await search(system, first, "pets and purchases", 50)
        assert sorted((h.text, h.session_key) for h in again) == sorted(
            (h.text, h.session_key) for h in everything
        )
        assert system.usage().model_calls == 4
        await system.close()

        later = open_system(settings(tmp_path))  # another stage: a new backend object
        assert await later.open_memory("lme-title-first") == first
        found = await search(later, first, "greyhound", 1)
        assert found[0].text == "We adopted a greyhound called Pixel."
        await later.delete_memory(first)
        assert await search(later, first, "greyhound", 5) == []
        assert len(await search(later, second, "Lisbon", 5)) == 1
        assert later.usage().model_calls == 0
        await later.close()

    asyncio.run(check())


def test_raw_turns_keep_their_turn_index_and_need_no_model(tmp_path: Path) -> None:
    needs_extra("mem0")

    async def check() -> None:
        system = open_system(settings(tmp_path, model=None, infer=False))
        assert Capability.TURN_PROVENANCE in type(system).capabilities
        assert Capability.EXTRACTS not in type(system).capabilities
        memory_id = await system.open_memory("lme-title-raw")
        for session in (BIKE, LISBON, BIKE):
            await system.ingest_session(memory_id, session)
        hits = await search(system, memory_id, "Lisbon trip", 50)
        assert len(hits) == 5  # the blank turn is not stored; BIKE twice is stored once
        assert hits[0].text == "I am flying to Lisbon in September."
        for hit in hits:
            session = SESSIONS[hit.session_key or ""]
            assert hit.turn_index is not None and hit.date == session.date
            assert session.turns[hit.turn_index].content == hit.text
        usage = system.usage()
        assert usage.model_calls == 0 and usage.embedding_calls >= 8
        # another stage reads the memory while this one holds it open
        other = open_system(settings(tmp_path, model=None, infer=False))
        assert await other.open_memory("lme-title-raw") == memory_id
        assert len(await search(other, memory_id, "Lisbon trip", 2)) == 2
        await other.close()
        assert len(await search(system, memory_id, "bike", 3)) == 3
        await system.close()

    asyncio.run(check())


def test_messages_per_add_splits_a_session_into_extractions(tmp_path: Path) -> None:
    needs_extra("mem0")

    async def check() -> None:
        system = open_system(settings(tmp_path, messages_per_add=2))
        memory_id = await system.open_memory("lme-title-split")
        await system.ingest_session(memory_id, BIKE)
        assert system.usage().model_calls == 2  # turns 0-1, then turn 2
        hits = await search(system, memory_id, "bike", 10)
        assert sorted(h.text for h in hits) == [
            "I bought a red road bike last week.",
            "It cost four hundred dollars.",
            "My sister Ann helped me choose the bike.",
        ]
        assert {(h.session_key, h.date) for h in hits} == {(BIKE.key, BIKE.date)}
        await system.close()

    asyncio.run(check())


HOBBIES = Session(
    key="k-5e0b",
    date="2024/03/15 (Fri) 00:00",
    turns=tuple(
        Turn(i, "user", text)
        for i, text in enumerate(
            ["I own a kayak.", "I play the cello.", "I grow basil.", "I collect stamps."]
        )
    ),
)


def test_an_extraction_cut_by_the_output_cap_is_asked_again_in_halves(tmp_path: Path) -> None:
    # A long session's extraction (a BEAM batch) outgrew the cap: mem0 could not parse the cut
    # reply and stored nothing of the session. With a cap of 16 words the fake extractor's
    # reply fits one of these turns but not two.
    needs_extra("mem0")
    capped = {"memory": "fake:mem0-extractor", "max_tokens": {"memory": 16}}

    async def check() -> None:
        system = open_system(
            Settings(memory={"backend": "mem0"}, run={"results_dir": tmp_path}, models=capped)
        )
        memory_id = await system.open_memory("lme-title-capped")
        await system.ingest_session(memory_id, HOBBIES)
        usage = system.usage()
        assert usage.model_calls == 1 + 2 + 4  # the session, its halves, its turns
        assert usage.capped_replies == 1 + 2
        hits = await search(system, memory_id, "hobbies", 10)
        assert sorted(h.text for h in hits) == sorted(t.content for t in HOBBIES.turns)
        assert {(h.session_key, h.date) for h in hits} == {(HOBBIES.key, HOBBIES.date)}

        long_turn = Session(
            key="k-77aa", date=HOBBIES.date, turns=(Turn(0, "user", "I sail. I row. I swim."),)
        )
        with pytest.raises(
            ExtractionCutError, match=r"turn 0 of session k-77aa .*max_tokens\.memory"
        ):
            await system.ingest_session(memory_id, long_turn)
        await system.close()

    asyncio.run(check())
