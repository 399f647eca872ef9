"""Durability of the embedded memory: awaited writes survive a SIGKILL of the server, so do
acknowledged ones while another process holds the write lock, the file survives restarts, and
two processes writing one file do not corrupt it."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from lme_bench.backends.mcp_session import McpSession, MemoryConnectionError
from lme_bench.backends.mycelian_mcp import McpEntryStore
from lme_bench.entries.models import NewEntry
from lme_bench.reference_memory.store import EmbeddedStore
from tests.conformance.servers import HttpServer


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])


async def _write_and_await(server: HttpServer, n: int) -> tuple[str, str]:
    backend = McpEntryStore(server.settings())
    vault = await backend.get_or_create_vault("durability")
    memory = await backend.get_or_create_memory(vault, "q1__run")
    entries = [
        NewEntry(f"turn {i} about kayaks", f"turn {i}", {"turn_index": str(i)}) for i in range(n)
    ]
    await backend.add_entries(vault, memory, entries)
    await backend.await_consistency(memory)  # acknowledged and awaited: must survive anything now
    await backend.close()
    return vault, memory


@pytest.mark.slow
def test_awaited_writes_survive_sigkill_and_restart(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "first")
    try:
        vault, memory = asyncio.run(_write_and_await(server, 300))
    finally:
        server.stop()  # SIGKILL, no shutdown hook runs
    path = server.path
    assert _integrity(path) == "ok"
    store = EmbeddedStore(path)
    assert store.count_entries(memory) == 300
    store.close()

    # A new server on the same file finds the same vault, memory and entries.
    restarted = HttpServer(tmp_path / "first")
    try:

        async def reopen() -> tuple[str, str, int, int]:
            backend = McpEntryStore(restarted.settings())
            v = await backend.get_or_create_vault("durability")
            m = await backend.get_or_create_memory(v, "q1__run")
            count = await backend.count_entries(m)
            hits = await backend.search(m, "kayaks", top_ke=5)
            await backend.close()
            return v, m, count, len(hits.entries)

        again = asyncio.run(reopen())
    finally:
        restarted.stop()
    assert again == (vault, memory, 300, 5)


_WRITER = textwrap.dedent(
    """
    import sys
    from lme_bench.reference_memory.store import EmbeddedStore
    from lme_bench.entries.models import NewEntry
    path, name, batches = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = EmbeddedStore(path)
    vault = store.get_or_create_vault("shared")
    mine = store.get_or_create_memory(vault, name)
    common = store.get_or_create_memory(vault, "common")
    for b in range(batches):
        store.add_entries(mine, [NewEntry(f"{name} {b} {i}", "s", {}) for i in range(20)])
        store.add_entries(common, [NewEntry(f"{name} common {b}", "s", {})])
        store.search(common, "common", top_ke=5)
    store.close()
    """
)


def test_two_processes_sharing_one_file_do_not_corrupt_it(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    EmbeddedStore(path).close()
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), name, "40"])
        for name in ("alpha", "beta")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    assert _integrity(path) == "ok"
    store = EmbeddedStore(path)
    vault = store.get_or_create_vault("shared")
    counts = {
        name: store.count_entries(store.get_or_create_memory(vault, name))
        for name in ("alpha", "beta", "common")
    }
    assert counts == {"alpha": 800, "beta": 800, "common": 80}
    entries = store.list_entries(store.get_or_create_memory(vault, "common"))
    times = [e.creation_time for e in entries]
    assert len(set(times)) == len(times)  # creation times stay unique across processes


_LOCK_HOLDER = textwrap.dedent(
    """
    import sqlite3, sys, time
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN IMMEDIATE")  # holds the file's write lock, like a slow or busy disk
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    db.execute("COMMIT")
    """
)


async def _add_until_killed(
    server: HttpServer, ids: dict[str, str], writer: int, acknowledged: list[str]
) -> None:
    session = McpSession(server.settings(timeout_s=60))
    try:
        for i in range(100_000):
            raw = f"writer {writer} entry {i}"
            try:
                await session.call("add_entry", {**ids, "raw_entry": raw, "summary": raw})
            except MemoryConnectionError:
                return  # the server is gone: this add was never acknowledged
            acknowledged.append(raw)
    finally:
        await session.close()


@pytest.mark.slow
def test_acknowledged_adds_survive_sigkill_while_another_process_holds_the_write_lock(
    tmp_path: Path,
) -> None:
    server = HttpServer(tmp_path / "locked")
    acknowledged: list[str] = []
    holder: subprocess.Popen[str] | None = None

    async def main() -> int:
        nonlocal holder
        setup = McpEntryStore(server.settings())
        vault = await setup.get_or_create_vault("crash")
        memory = await setup.get_or_create_memory(vault, "q1__run")
        await setup.close()
        ids = {"vault_id": vault, "memory_id": memory}
        writers = [
            asyncio.create_task(_add_until_killed(server, ids, n, acknowledged)) for n in range(8)
        ]
        while len(acknowledged) < 40:
            await asyncio.sleep(0.05)
        holder = subprocess.Popen(
            [sys.executable, "-c", _LOCK_HOLDER, str(server.path), "6"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None
        assert await asyncio.to_thread(holder.stdout.readline) == "locked\n"
        before_lock = len(acknowledged)
        await asyncio.sleep(2.5)  # the server keeps being asked to add while it cannot write
        server.stop()  # SIGKILL
        await asyncio.gather(*writers)
        return before_lock

    try:
        before_lock = asyncio.run(main())
    finally:
        server.stop()
        if holder is not None:
            holder.wait(timeout=30)
    assert before_lock >= 40
    store = EmbeddedStore(server.path)
    try:
        (memory,) = store.list_memories(store.get_or_create_vault("crash"))
        stored = Counter(e.raw_entry for e in store.list_entries(memory.memory_id))
    finally:
        store.close()
    assert _integrity(server.path) == "ok"
    assert [raw for raw in acknowledged if stored[raw] != 1] == []  # none lost or doubled
    assert sum(stored.values()) >= len(acknowledged)
