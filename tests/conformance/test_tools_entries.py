"""Entries: round trip, paging, read-after-write and concurrent writers, on every implementation."""

from __future__ import annotations

import asyncio

from tests.conformance.clients import ToolClient
from tests.conformance.harness import Implementation
from tests.conformance.steps import add, all_entries, expect_error, new_memory


def test_entry_round_trip_with_tags(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        tags = {"session_key": "s0007", "turn_index": "3", "role": "user"}
        await add(client, vault_id, memory_id, "My golden retriever Max chews everything.", **tags)
        assert await client.call("await_consistency", memory_id=memory_id) == "consistent"
        page = await client.call("list_entries", vault_id=vault_id, memory_id=memory_id)
        assert page["count"] == 1 and len(page["entries"]) == 1
        listed = page["entries"][0]
        assert listed["rawEntry"] == "My golden retriever Max chews everything."
        assert listed["tags"] == tags and listed["creationTime"]
        entry = await client.call(
            "get_entry", vault_id=vault_id, memory_id=memory_id, entry_id=listed["entryId"]
        )
        assert entry["entryId"] == listed["entryId"] and entry["memoryId"] == memory_id
        assert entry["summary"] == listed["summary"] and entry["tags"] == tags
        assert entry["rawEntry"] == listed["rawEntry"]

    tools.run(scenario)


def test_list_paging_with_cursors_and_limits(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        for n in range(12):
            await add(client, vault_id, memory_id, f"note number {n}", n=str(n))
        await client.call("await_consistency", memory_id=memory_id)
        ids = dict(vault_id=vault_id, memory_id=memory_id)

        paged = await all_entries(client, vault_id, memory_id, limit=5)
        assert len(paged) == 12 and len({e["entryId"] for e in paged}) == 12
        first = await client.call("list_entries", limit=5, **ids)
        assert first["count"] == len(first["entries"]) == 5 and first["applied_limit"] == 5

        by_time = sorted(paged, key=lambda e: e["creationTime"])
        oldest, newest = by_time[0], by_time[-1]
        after = await client.call("list_entries", limit=50, after=oldest["creationTime"], **ids)
        assert {e["entryId"] for e in after["entries"]} == {e["entryId"] for e in by_time[1:]}
        before = await client.call("list_entries", limit=50, before=newest["creationTime"], **ids)
        assert {e["entryId"] for e in before["entries"]} == {e["entryId"] for e in by_time[:-1]}

        for limit in (1, 50):
            page = await client.call("list_entries", limit=limit, **ids)
            assert page["applied_limit"] == limit and len(page["entries"]) == min(limit, 12)
        for limit in (0, 51):
            await expect_error(client, "list_entries", limit=limit, **ids)
        await expect_error(
            client,
            "list_entries",
            before=newest["creationTime"],
            after=oldest["creationTime"],
            **ids,
        )

    tools.run(scenario)


def test_read_after_write(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        for n in range(60):
            await add(client, vault_id, memory_id, f"fact {n}: the sky was shade {n}", n=str(n))
        assert await client.call("await_consistency", memory_id=memory_id) == "consistent"
        entries = await all_entries(client, vault_id, memory_id)
        assert sorted(int(e["tags"]["n"]) for e in entries) == list(range(60))

    tools.run(scenario)


def test_concurrent_writers_to_different_memories(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        memories = [await new_memory(client, f"w{w}") for w in range(4)]

        async def writer(w: int, vault_id: str, memory_id: str) -> None:
            for n in range(25):
                await add(client, vault_id, memory_id, f"writer {w} line {n}", w=str(w), n=str(n))

        await asyncio.gather(*(writer(w, *ids) for w, ids in enumerate(memories)))
        for w, (vault_id, memory_id) in enumerate(memories):
            await client.call("await_consistency", memory_id=memory_id)
            entries = await all_entries(client, vault_id, memory_id)
            assert {e["tags"]["w"] for e in entries} == {str(w)}
            assert sorted(int(e["tags"]["n"]) for e in entries) == list(range(25))
            # one writer's entries keep their order: creation times follow the calls
            by_time = sorted(entries, key=lambda e: e["creationTime"])
            assert [int(e["tags"]["n"]) for e in by_time] == list(range(25))

    tools.run(scenario)
