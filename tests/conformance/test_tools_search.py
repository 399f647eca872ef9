"""Context snapshots and search ranking, on every implementation of the memory tools."""

from __future__ import annotations

from tests.conformance.clients import ToolClient
from tests.conformance.harness import Implementation
from tests.conformance.steps import add, new_memory

SNAPSHOTS = [
    "Facts: the user keeps bees on a rooftop in Lisbon.",
    "Facts: the user is learning the cello and practises every morning.",
    "Facts: the user adopted a greyhound named Comet.",
]
NOTES = [
    ("I repaired the bicycle chain on my commuter bike today.", "s1"),
    ("My sister is visiting from Montreal next week.", "s2"),
    ("The sourdough starter needs feeding twice a day in summer.", "s3"),
    ("I bought a new bicycle helmet with a rear light.", "s4"),
    ("We planted tomatoes and basil on the balcony.", "s5"),
]


def test_context_snapshots_latest_wins_older_still_found(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        ids = dict(vault_id=vault_id, memory_id=memory_id)
        assert await client.call("get_context", **ids) == "context not found"
        for text in SNAPSHOTS:
            assert await client.call("put_context", content=text, **ids) == "enqueued"
        await client.call("await_consistency", memory_id=memory_id)
        assert await client.call("get_context", **ids) == SNAPSHOTS[-1]

        found = await client.call(
            "search_memories", memory_id=memory_id, query="rooftop bees Lisbon", top_kc=3
        )
        assert found["latestContext"] == SNAPSHOTS[-1] and found["latestContextTimestamp"]
        contexts = found["contexts"]
        assert contexts and contexts[0]["context"] == SNAPSHOTS[0]  # the older snapshot
        assert all(c["timestamp"] for c in contexts) and len(contexts) <= 3
        scores = [c["score"] for c in contexts]
        assert scores == sorted(scores, reverse=True)

    tools.run(scenario)


def test_search_ranks_and_scores(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        for text, session in NOTES:
            await add(client, vault_id, memory_id, text, session_key=session)
        await client.call(
            "put_context",
            vault_id=vault_id,
            memory_id=memory_id,
            content="Facts: the user rides a bicycle to work.",
        )
        await client.call("await_consistency", memory_id=memory_id)

        found = await client.call(
            "search_memories", memory_id=memory_id, query="bicycle chain repair", top_ke=5
        )
        entries = found["entries"]
        assert entries and entries[0]["summary"].startswith("I repaired the bicycle chain")
        assert found["count"] == len(entries) <= 5
        scores = [e["score"] for e in entries]
        assert scores == sorted(scores, reverse=True)
        assert all(e["entryId"] and e["creationTime"] for e in entries)
        assert all(not e.get("rawEntry") for e in entries)  # include_raw_entries defaults off
        assert entries[0].get("tags", {"session_key": "s1"})["session_key"] == "s1"

        two = await client.call("search_memories", memory_id=memory_id, query="bicycle", top_ke=2)
        assert 1 <= len(two["entries"]) <= 2

        only_contexts = await client.call(
            "search_memories", memory_id=memory_id, query="bicycle", top_ke=0
        )
        assert only_contexts["entries"] == [] and only_contexts["contexts"]

        raw = await client.call(
            "search_memories",
            memory_id=memory_id,
            query="sourdough starter",
            include_raw_entries=True,
        )
        assert raw["entries"][0]["rawEntry"] == NOTES[2][0]

    tools.run(scenario)
