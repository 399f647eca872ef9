"""MemoryService: Mycelian's 13 tools over the embedded store, called directly (no MCP)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Coroutine
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from lme_bench.reference_memory.service import MemoryService, ToolError
from lme_bench.reference_memory.store import EmbeddedStore
from lme_bench.reference_memory.write_queue import WriteQueue

TOOLS = {
    "create_vault",
    "list_vaults",
    "list_memories",
    "get_memory",
    "create_memory_in_vault",
    "add_entry",
    "list_entries",
    "get_entry",
    "put_context",
    "get_context",
    "await_consistency",
    "search_memories",
    "get_default_prompts",
}

Body = Callable[[MemoryService, dict[str, str]], Awaitable[None]]


class Fixture:
    """Runs one async test body against a fresh service holding one vault and one memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store = EmbeddedStore(path)

    def run(self, body: Body, *, queue_writes: bool = True) -> None:
        async def main() -> None:
            service = MemoryService(self.store, queue_writes=queue_writes)
            vault = json.loads(await service.call("create_vault", {"title": "lme-test"}))
            memory = json.loads(
                await service.call(
                    "create_memory_in_vault",
                    {"vault_id": vault["vaultId"], "title": "q1__run", "memory_type": "CHAT"},
                )
            )
            ids = {"vault_id": vault["vaultId"], "memory_id": memory["memoryId"]}
            try:
                await body(service, ids)
            finally:
                await service.close()

        asyncio.run(main())


@pytest.fixture
def svc(tmp_path: Path) -> Fixture:
    return Fixture(tmp_path / "memory.sqlite")


async def call_json(service: MemoryService, name: str, **arguments: Any) -> Any:
    return json.loads(await service.call(name, arguments))


async def add(service: MemoryService, ids: dict[str, str], text: str, **tags: str) -> str:
    return await service.call(
        "add_entry", {**ids, "raw_entry": f"user: {text}", "summary": text, "tags": tags}
    )


def test_tool_names() -> None:
    assert set(MemoryService.TOOL_NAMES) == TOOLS
    assert len(MemoryService.TOOL_NAMES) == 13


def test_vaults_and_memories(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        vault_id, memory_id = ids["vault_id"], ids["memory_id"]
        assert await call_json(service, "list_vaults") == [
            {"vaultId": vault_id, "title": "lme-test"}
        ]
        other = await call_json(service, "create_vault", title="other-2", description="d")
        assert {"vaultId", "title", "description", "createdAt"} <= set(other)
        assert other["title"] == "other-2" and other["description"] == "d"
        assert len(await call_json(service, "list_vaults")) == 2
        assert await call_json(service, "list_memories", vault_id=vault_id) == [
            {"memoryId": memory_id, "title": "q1__run"}
        ]
        assert await call_json(service, "list_memories", vault_id=other["vaultId"]) == []
        memory = await call_json(service, "get_memory", **ids)
        assert set(memory) == {
            "memoryId",
            "vaultId",
            "title",
            "memoryType",
            "description",
            "createdAt",
        }
        assert (memory["memoryId"], memory["vaultId"], memory["memoryType"]) == (
            memory_id,
            vault_id,
            "CHAT",
        )
        notes = await call_json(
            service,
            "create_memory_in_vault",
            vault_id=vault_id,
            title="Notes: 2024",
            memory_type="notes",
            description="x",
        )
        assert notes["memoryType"] == "NOTES" and notes["description"] == "x"
        # Duplicates are refused, naming the existing id.
        with pytest.raises(ToolError, match=vault_id):
            await service.call("create_vault", {"title": "lme-test"})
        with pytest.raises(ToolError, match=memory_id):
            await service.call(
                "create_memory_in_vault",
                {"vault_id": vault_id, "title": "q1__run", "memory_type": "CHAT"},
            )

    svc.run(body)


def test_entries_round_trip(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        assert await add(service, ids, "I adopted a cat named Miso", session_key="s1") == "enqueued"
        assert await service.call("await_consistency", {"memory_id": ids["memory_id"]}) == (
            "consistent"
        )
        page = await call_json(service, "list_entries", **ids)
        assert page["count"] == 1 and page["applied_limit"] == 25
        assert page["next_before"] is None and page["next_after"] is None
        (entry,) = page["entries"]
        assert set(entry) == {"entryId", "memoryId", "rawEntry", "summary", "tags", "creationTime"}
        assert entry["tags"] == {"session_key": "s1"}
        assert entry["rawEntry"] == "user: I adopted a cat named Miso"
        assert entry["creationTime"].endswith("Z")
        assert await call_json(service, "get_entry", **ids, entry_id=entry["entryId"]) == entry
        # An identical entry is accepted and stored once.
        await add(service, ids, "I adopted a cat named Miso", session_key="s1")
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})
        assert (await call_json(service, "list_entries", **ids))["count"] == 1

    svc.run(body)


def test_contexts(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        assert await service.call("get_context", ids) == "context not found"
        assert await service.call("put_context", {**ids, "content": "## Facts\n- v1"}) == "enqueued"
        await service.call("put_context", {**ids, "content": "## Facts\n- v2"})
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})
        assert await service.call("get_context", ids) == "## Facts\n- v2"
        big = "x" * 65_536
        await service.call("put_context", {**ids, "content": big})
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})
        assert await service.call("get_context", ids) == big

    svc.run(body)


def test_search_shape(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        memory_id = ids["memory_id"]
        await add(service, ids, "my sister Ana lives in Lisbon", session_key="s1")
        await add(service, ids, "I bought a road bike in March", session_key="s2")
        await add(service, ids, "the weather was nice", session_key="s3")
        await service.call("put_context", {**ids, "content": "Facts: sister Ana in Lisbon"})
        await service.call("await_consistency", {"memory_id": memory_id})

        found = await call_json(service, "search_memories", memory_id=memory_id, query="Lisbon")
        assert set(found) == {
            "entries",
            "count",
            "latestContext",
            "latestContextTimestamp",
            "contexts",
        }
        assert found["count"] == len(found["entries"]) >= 1
        top = found["entries"][0]
        assert set(top) == {"entryId", "summary", "score", "creationTime", "tags"}
        assert top["tags"] == {"session_key": "s1"}
        scores = [hit["score"] for hit in found["entries"]]
        assert scores == sorted(scores, reverse=True)
        assert found["latestContext"] == "Facts: sister Ana in Lisbon"
        assert found["latestContextTimestamp"].endswith("Z")
        assert set(found["contexts"][0]) == {"context", "timestamp", "score"}

        raw = await call_json(
            service,
            "search_memories",
            memory_id=memory_id,
            query="road bike",
            top_ke=1,
            top_kc=1,
            include_raw_entries=True,
        )
        assert raw["count"] == 1
        assert raw["entries"][0]["rawEntry"] == "user: I bought a road bike in March"
        only_contexts = await call_json(
            service, "search_memories", memory_id=memory_id, query="Ana", top_ke=0
        )
        assert only_contexts["entries"] == [] and only_contexts["count"] == 0
        assert len(only_contexts["contexts"]) == 1

    svc.run(body)


def test_search_without_context_has_null_latest(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        found = await call_json(service, "search_memories", memory_id=ids["memory_id"], query="x")
        assert found["entries"] == [] and found["contexts"] == []
        assert found["latestContext"] is None and found["latestContextTimestamp"] is None

    svc.run(body)


def test_default_prompts(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        prompts = await call_json(service, "get_default_prompts", memory_type="chat")
        folder = resources.files("lme_bench.reference_memory").joinpath("prompts", "chat", "v1")
        assert prompts["version"] == folder.joinpath("VERSION").read_text().strip()
        assert prompts["version"] == "lme-bench-chat-v1"
        assert set(prompts["templates"]) == {
            "context_prompt",
            "entry_capture_prompt",
            "summary_prompt",
        }
        assert "512" in prompts["templates"]["entry_capture_prompt"]
        rules = prompts["context_summary_rules"]
        for section in ("Facts", "Preferences", "Decisions", "Timeline", "5,000"):
            assert section in rules
        assert await call_json(service, "get_default_prompts") == prompts
        assert await call_json(service, "get_default_prompts", memory_type="CHAT") == prompts

    svc.run(body)


Call = tuple[str, Callable[[dict[str, str]], dict[str, Any]], str]
BAD_CALLS: list[Call] = [
    ("nope", lambda ids: {}, "unknown tool"),
    ("list_vaults", lambda ids: {"extra": 1}, "unknown parameter"),
    ("create_vault", lambda ids: {}, "'title' is required"),
    ("create_vault", lambda ids: {"title": ""}, "'title' must not be empty"),
    ("create_vault", lambda ids: {"title": "Has Caps"}, "lowercase"),
    ("create_vault", lambda ids: {"title": "a" * 51}, "1-50"),
    ("create_vault", lambda ids: {"title": 7}, "'title' must be a string"),
    ("list_memories", lambda ids: {"vault_id": "missing"}, "vault missing not found"),
    ("get_memory", lambda ids: {**ids, "vault_id": "missing"}, "not found"),
    (
        "create_memory_in_vault",
        lambda ids: {"vault_id": ids["vault_id"], "title": " "},
        "'title' must not be empty",
    ),
    (
        "create_memory_in_vault",
        lambda ids: {"vault_id": ids["vault_id"], "title": "t"},
        "'memory_type' is required",
    ),
    (
        "create_memory_in_vault",
        lambda ids: {"vault_id": "missing", "title": "t", "memory_type": "CHAT"},
        "not found",
    ),
    ("add_entry", lambda ids: {**ids, "summary": "s"}, "'raw_entry' is required"),
    ("add_entry", lambda ids: {**ids, "raw_entry": "r", "summary": "s" * 513}, "512"),
    ("add_entry", lambda ids: {**ids, "raw_entry": "r", "summary": "s", "tags": ["a"]}, "tags"),
    (
        "add_entry",
        lambda ids: {**ids, "raw_entry": "r", "summary": "s", "tags": {"n": 1}},
        "tags",
    ),
    (
        "add_entry",
        lambda ids: {**ids, "memory_id": "missing", "raw_entry": "r", "summary": "s"},
        "memory missing not found",
    ),
    ("list_entries", lambda ids: {**ids, "limit": 0}, "'limit' must be between 1 and 50"),
    ("list_entries", lambda ids: {**ids, "limit": 51}, "'limit'"),
    ("list_entries", lambda ids: {**ids, "limit": "10"}, "'limit' must be an integer"),
    ("list_entries", lambda ids: {**ids, "limit": True}, "'limit' must be an integer"),
    ("list_entries", lambda ids: {**ids, "before": "yesterday"}, "'before' must be an RFC 3339"),
    ("list_entries", lambda ids: {**ids, "after": "2024-13-01T00:00:00Z"}, "'after'"),
    (
        "list_entries",
        lambda ids: {**ids, "before": "2024-01-01T00:00:00Z", "after": "2024-01-01T00:00:00Z"},
        "not both",
    ),
    ("get_entry", lambda ids: {**ids, "entry_id": "missing"}, "entry missing not found"),
    ("put_context", lambda ids: {**ids, "content": "x" * 65_537}, "65,536"),
    ("put_context", lambda ids: {**ids, "content": ""}, "'content' must not be empty"),
    ("put_context", lambda ids: ids, "'content' is required"),
    ("get_context", lambda ids: {"vault_id": ids["vault_id"]}, "'memory_id' is required"),
    ("await_consistency", lambda ids: {"memory_id": "missing"}, "memory missing not found"),
    ("search_memories", lambda ids: {"memory_id": ids["memory_id"]}, "'query' is required"),
    ("search_memories", lambda ids: {"memory_id": "missing", "query": "q"}, "not found"),
    (
        "search_memories",
        lambda ids: {"memory_id": ids["memory_id"], "query": "q", "top_ke": 26},
        "'top_ke' must be between 0 and 25",
    ),
    (
        "search_memories",
        lambda ids: {"memory_id": ids["memory_id"], "query": "q", "top_kc": 0},
        "'top_kc' must be between 1 and 10",
    ),
    (
        "search_memories",
        lambda ids: {"memory_id": ids["memory_id"], "query": "q", "include_raw_entries": "yes"},
        "'include_raw_entries' must be true or false",
    ),
    ("get_default_prompts", lambda ids: {"memory_type": "notes"}, "unknown memory_type"),
]


@pytest.mark.parametrize(("tool", "make_args", "message"), BAD_CALLS)
def test_validation_errors_name_the_problem(
    svc: Fixture, tool: str, make_args: Callable[[dict[str, str]], dict[str, Any]], message: str
) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        with pytest.raises(ToolError) as caught:
            await service.call(tool, make_args(ids))
        assert message in str(caught.value)
        assert caught.value.__class__ is ToolError

    svc.run(body)


def test_queued_writes_apply_in_order_and_close_drains(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        for i in range(40):
            await add(service, ids, f"note {i}", i=str(i))
            if i % 10 == 0:
                await service.call("put_context", {**ids, "content": f"after {i}"})
        # Read-after-write: everything enqueued before await_consistency is visible after it.
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})
        entries = svc.store.list_entries(ids["memory_id"])
        assert [e.tags["i"] for e in entries] == [str(i) for i in range(40)]
        assert await service.call("get_context", ids) == "after 30"
        for i in range(40, 45):
            await add(service, ids, f"note {i}", i=str(i))

    svc.run(body)
    assert svc.store.count_entries(_only_memory(svc.store)) == 45


def _only_memory(store: EmbeddedStore) -> str:
    (vault,) = store.list_vaults()
    (memory,) = store.list_memories(vault.vault_id)
    return memory.memory_id


def test_failed_queued_write_is_reported_to_its_caller(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        await add(service, ids, "stored fine")
        # The memory disappears behind the service's back (e.g. another process deleted it).
        with sqlite3.connect(svc.path) as db:
            db.execute("PRAGMA foreign_keys = OFF")
            db.execute("DELETE FROM memories WHERE memory_id = ?", (ids["memory_id"],))
        with pytest.raises(ToolError, match=r"add_entry: memory .* not found"):
            await add(service, ids, "lost write")
        assert svc.store.list_entries(ids["memory_id"])[-1].raw_entry.endswith("stored fine")

    svc.run(body)


def test_failed_write_is_reported_once_and_queue_keeps_working(
    svc: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        real = svc.store._insert_context

        def broken(db: sqlite3.Connection, memory_id: str, content: str) -> None:
            if content == "boom":
                raise sqlite3.OperationalError("disk I/O error")
            real(db, memory_id, content)

        monkeypatch.setattr(svc.store, "_insert_context", broken)
        with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
            await service.call("put_context", {**ids, "content": "boom"})
        assert await service.call("put_context", {**ids, "content": "fine"}) == "enqueued"
        assert await service.call("await_consistency", {"memory_id": ids["memory_id"]}) == (
            "consistent"
        )
        assert await service.call("get_context", ids) == "fine"

    svc.run(body)


def test_unqueued_writes_apply_before_returning(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        assert await add(service, ids, "direct") == "enqueued"
        assert svc.store.count_entries(ids["memory_id"]) == 1
        await service.call("put_context", {**ids, "content": "ctx"})
        assert await service.call("get_context", ids) == "ctx"
        assert await service.call("await_consistency", {"memory_id": ids["memory_id"]}) == (
            "consistent"
        )

    svc.run(body, queue_writes=False)


def test_list_entries_pages_60_entries_both_ways(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        for i in range(60):
            await add(service, ids, f"entry {i}", i=str(i))
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})

        # Newest first, paging older with next_before until it is null.
        seen: list[str] = []
        page = await call_json(service, "list_entries", **ids, limit=7)
        assert page["next_after"] is None
        while True:
            assert page["count"] == len(page["entries"]) <= 7 and page["applied_limit"] == 7
            seen += [e["tags"]["i"] for e in page["entries"]]
            if page["next_before"] is None:
                break
            assert page["next_before"] == page["entries"][-1]["creationTime"]
            page = await call_json(
                service, "list_entries", **ids, limit=7, before=page["next_before"]
            )
        assert seen == [str(i) for i in reversed(range(60))]

        # From the beginning, paging newer with next_after until it is null.
        seen = []
        page = await call_json(
            service, "list_entries", **ids, limit=50, after="2000-01-01T00:00:00+02:00"
        )
        assert page["next_before"] is None and page["count"] == 50
        while True:
            seen += [e["tags"]["i"] for e in reversed(page["entries"])]
            if page["next_after"] is None:
                break
            page = await call_json(
                service, "list_entries", **ids, limit=50, after=page["next_after"]
            )
        assert seen == [str(i) for i in range(60)]

    svc.run(body)


def test_list_entries_cursor_precision(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        for i in range(3):
            await add(service, ids, f"entry {i}", i=str(i))
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})
        middle = (await call_json(service, "list_entries", **ids))["entries"][1]["creationTime"]
        # Nanosecond cursors (as Go writes them) keep their meaning against microsecond times.
        nanos = middle[:-1] + "001Z"
        older = await call_json(service, "list_entries", **ids, before=nanos)
        assert [e["tags"]["i"] for e in older["entries"]] == ["1", "0"]
        newer = await call_json(service, "list_entries", **ids, after=nanos)
        assert [e["tags"]["i"] for e in newer["entries"]] == ["2"]
        exact = await call_json(service, "list_entries", **ids, before=middle)
        assert [e["tags"]["i"] for e in exact["entries"]] == ["0"]

    svc.run(body)


def test_concurrent_calls_share_one_service(svc: Fixture) -> None:
    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        async def writer(n: int) -> None:
            for i in range(10):
                await add(service, ids, f"w{n} e{i}")

        tasks: list[Coroutine[Any, Any, None]] = [writer(n) for n in range(5)]
        await asyncio.gather(*tasks)
        await service.call("await_consistency", {"memory_id": ids["memory_id"]})
        assert svc.store.count_entries(ids["memory_id"]) == 50

    svc.run(body)


def test_a_full_write_queue_answers_server_busy(svc: Fixture) -> None:
    release = threading.Event()
    real = svc.store.store_writes

    def stuck(entries: Any, contexts: Any) -> None:
        release.wait(30)
        real(entries, contexts)

    async def body(service: MemoryService, ids: dict[str, str]) -> None:
        service._queue = WriteQueue(svc.store, capacity=1, full_wait_s=0.2)
        svc.store.store_writes = stuck  # type: ignore[method-assign]
        first = asyncio.create_task(add(service, ids, "taken by the writer"))
        await asyncio.sleep(0.1)
        second = asyncio.create_task(add(service, ids, "waits in the queue"))
        await asyncio.sleep(0.1)
        with pytest.raises(ToolError, match=r"^add_entry: server busy: 1 writes are waiting"):
            await add(service, ids, "refused")
        release.set()
        assert await asyncio.gather(first, second) == ["enqueued", "enqueued"]

    svc.run(body)
    assert svc.store.count_entries(_only_memory(svc.store)) == 2
