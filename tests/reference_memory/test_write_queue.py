"""The write queue: acknowledged means committed, writes share commits, the queue is bounded."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from lme_bench.entries.models import NewEntry
from lme_bench.reference_memory.store import EmbeddedStore
from lme_bench.reference_memory.write_queue import QueueFullError, Write, WriteQueue


def _store(tmp_path: Path, memories: int = 1) -> tuple[EmbeddedStore, list[str]]:
    store = EmbeddedStore(tmp_path / "memory.sqlite")
    vault = store.get_or_create_vault("queue")
    return store, [store.get_or_create_memory(vault, f"m{i}") for i in range(memories)]


def _stored(path: Path, raw: str) -> int:
    """How many entries with this raw text another connection sees in the file."""
    with sqlite3.connect(path) as db:
        return int(
            db.execute("SELECT count(*) FROM entries WHERE raw_entry = ?", (raw,)).fetchone()[0]
        )


def _entry(text: str) -> Write:
    return Write(entry=NewEntry(text, text, {}))


def test_each_write_is_committed_before_submit_returns(tmp_path: Path) -> None:
    store, memories = _store(tmp_path, memories=4)
    commits: list[int] = []
    real = store.store_writes

    def counted(entries: list[tuple[str, NewEntry]], contexts: list[tuple[str, str]]) -> None:
        commits.append(len(entries) + len(contexts))
        real(entries, contexts)

    store.store_writes = counted  # type: ignore[method-assign]
    seen_after_ack: list[int] = []

    async def client(memory: str, n: int) -> None:
        texts = [f"{memory} {i}" for i in range(n)]
        for text in texts:
            await queue.submit(memory, _entry(text))
            seen_after_ack.append(_stored(store.path, text))

    async def main() -> None:
        await asyncio.gather(*(client(m, 25) for m in memories))
        await queue.submit(memories[0], Write(context="ctx"))

    queue = WriteQueue(store)
    asyncio.run(main())
    assert seen_after_ack == [1] * 100  # visible to another connection once acknowledged
    assert sum(commits) == 101
    assert len(commits) < 101  # concurrent clients shared commits
    for memory in memories:
        texts = [e.raw_entry for e in store.list_entries(memory)]
        assert texts == [f"{memory} {i}" for i in range(25)]  # submission order kept
    assert store.latest_context(memories[0]) is not None
    store.close()


def test_a_full_queue_makes_writers_wait_then_refuses(tmp_path: Path) -> None:
    store, (memory,) = _store(tmp_path)
    taken, release = threading.Event(), threading.Event()
    real = store.store_writes

    def slow(entries: list[tuple[str, NewEntry]], contexts: list[tuple[str, str]]) -> None:
        taken.set()
        release.wait(30)
        real(entries, contexts)

    store.store_writes = slow  # type: ignore[method-assign]

    async def main() -> None:
        queue = WriteQueue(store, capacity=2, full_wait_s=0.3)
        first = asyncio.create_task(queue.submit(memory, _entry("first")))
        while not taken.is_set():  # the writer took it and is stuck in the store
            await asyncio.sleep(0.01)
        queued = [asyncio.create_task(queue.submit(memory, _entry(f"q{i}"))) for i in range(2)]
        while queue.waiting() < 2:
            await asyncio.sleep(0.01)
        with pytest.raises(QueueFullError, match=r"2 writes are waiting .* holds 2"):
            await queue.submit(memory, _entry("refused"))
        assert queue.waiting() == 2  # the queue did not grow
        queue.full_wait_s = 60  # the next writer waits for room as long as it takes here
        waiter = asyncio.create_task(queue.submit(memory, _entry("waits")))
        await asyncio.sleep(0.05)
        try:
            assert not waiter.done()  # waiting for room, not refused yet
        finally:
            release.set()
        await asyncio.gather(first, *queued, waiter)

    asyncio.run(main())
    texts = [e.raw_entry for e in store.list_entries(memory)]
    assert texts == ["first", "q0", "q1", "waits"]
    store.close()


def test_a_failure_nobody_heard_is_reported_by_the_next_wait(tmp_path: Path) -> None:
    store, (memory,) = _store(tmp_path)
    release = threading.Event()
    real = store.store_writes

    def failing(entries: list[tuple[str, NewEntry]], contexts: list[tuple[str, str]]) -> None:
        release.wait(30)
        if any(entry.raw_entry == "bad" for _, entry in entries):
            raise sqlite3.OperationalError("disk I/O error")
        real(entries, contexts)

    store.store_writes = failing  # type: ignore[method-assign]

    async def main() -> list[str]:
        queue = WriteQueue(store)
        caller = asyncio.create_task(queue.submit(memory, _entry("bad")))
        await asyncio.sleep(0.05)
        caller.cancel()  # the client went away before the commit
        with pytest.raises(asyncio.CancelledError):
            await caller
        good = asyncio.create_task(queue.submit(memory, _entry("good")))
        release.set()
        await good
        failures = await queue.wait(memory)
        assert await queue.wait(memory) == []  # reported once
        return failures

    failures = asyncio.run(main())
    assert len(failures) == 1 and "add_entry failed: disk I/O error" in failures[0]
    assert [e.raw_entry for e in store.list_entries(memory)] == ["good"]
    store.close()
