"""Concurrency load test of our memory server over streamable HTTP on loopback.

For each level (default 1, 8, 32, 64 concurrent client sessions) every session creates its own
memory in a fresh vault, adds `--adds` entries one call at a time, awaits consistency, runs
`--searches` searches, then lists its memory: any acknowledged entry missing (lost), stored
twice (duplicated) or written by another session (foreign) is counted.

    python perf/memory_load.py [--sessions 1,8,32,64] [--adds 200] [--searches 20]
        [--no-queue]

Prints one Markdown row per level for docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from support import free_port, start_memory_server

from lme_bench.backends.mcp_session import McpSession
from lme_bench.config.settings import McpSettings

WORDS = [
    "kayak",
    "budget",
    "river",
    "camping",
    "lantern",
    "recipe",
    "museum",
    "violin",
    "garden",
    "trail",
]


@dataclass
class Tally:
    add_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    add_phase: list[tuple[float, float]] = field(default_factory=list)  # per session
    lost: int = 0
    duplicated: int = 0
    foreign: int = 0


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _listed(session: McpSession, vault: str, memory: str) -> list[str]:
    """Every entry's raw text, paging list_entries from the newest."""
    raws: list[str] = []
    cursor: dict[str, str] = {}
    while True:
        page = json.loads(
            await session.call(
                "list_entries", {"vault_id": vault, "memory_id": memory, "limit": 50, **cursor}
            )
        )
        raws += [str(item["rawEntry"]) for item in page["entries"]]
        if not page.get("next_before"):
            return raws
        cursor = {"before": str(page["next_before"])}


async def one_client(
    url: str, vault: str, index: int, adds: int, searches: int, tally: Tally
) -> None:
    session = McpSession(McpSettings(url=url, timeout_s=120))
    try:
        created = await session.call(
            "create_memory_in_vault",
            {"vault_id": vault, "title": f"client-{index}", "memory_type": "CHAT"},
        )
        memory = str(json.loads(created)["memoryId"])
        acknowledged: list[str] = []
        first = time.perf_counter()
        for i in range(adds):
            raw = f"client {index} entry {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 7) % 10]}"
            started = time.perf_counter()
            try:
                await session.call(
                    "add_entry",
                    {"vault_id": vault, "memory_id": memory, "raw_entry": raw, "summary": raw},
                )
            except Exception as exc:
                tally.errors.append(f"add_entry: {exc}")
                continue
            tally.add_ms.append((time.perf_counter() - started) * 1000)
            acknowledged.append(raw)
        tally.add_phase.append((first, time.perf_counter()))
        await session.call("await_consistency", {"memory_id": memory})
        for i in range(searches):
            started = time.perf_counter()
            await session.call(
                "search_memories",
                {"memory_id": memory, "query": f"{WORDS[i % 10]} {WORDS[(i + 3) % 10]}"},
            )
            tally.search_ms.append((time.perf_counter() - started) * 1000)
        stored = Counter(await _listed(session, vault, memory))
        mine = f"client {index} entry "
        tally.lost += sum(1 for raw in acknowledged if raw not in stored)
        tally.duplicated += sum(count - 1 for count in stored.values() if count > 1)
        tally.foreign += sum(count for raw, count in stored.items() if not raw.startswith(mine))
    except Exception as exc:
        tally.errors.append(f"client {index}: {type(exc).__name__}: {exc}")
    finally:
        await session.close()


async def level(url: str, sessions: int, adds: int, searches: int) -> str:
    admin = McpSession(McpSettings(url=url, timeout_s=120))
    created = await admin.call("create_vault", {"title": f"load-{sessions}-{time.time_ns()}"})
    vault = str(json.loads(created)["vaultId"])
    await admin.close()
    tally = Tally()
    started = time.perf_counter()
    await asyncio.gather(
        *(one_client(url, vault, i, adds, searches, tally) for i in range(sessions))
    )
    seconds = time.perf_counter() - started
    # adds/s over the add phase: from the first session's first add to the last one's last
    begin = min((start for start, _ in tally.add_phase), default=0.0)
    end = max((stop for _, stop in tally.add_phase), default=0.0)
    rate = len(tally.add_ms) / (end - begin) if end > begin else 0.0
    for error in tally.errors[:5]:
        print(f"  error: {error}", file=sys.stderr)
    return (
        f"| {sessions} | {len(tally.add_ms):,} | {rate:,.0f} | {_pct(tally.add_ms, 0.5):.1f} |"
        f" {_pct(tally.add_ms, 0.99):.1f} | {_pct(tally.search_ms, 0.5):.1f} |"
        f" {_pct(tally.search_ms, 0.99):.1f} | {tally.lost} | {tally.duplicated} |"
        f" {tally.foreign} | {len(tally.errors)} | {seconds:.1f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,8,32,64", help="comma-separated levels")
    parser.add_argument("--adds", type=int, default=200, help="add_entry calls per session")
    parser.add_argument("--searches", type=int, default=20, help="searches per session")
    parser.add_argument("--no-queue", action="store_true", help="serve with --no-queue")
    args = parser.parse_args()
    levels = [int(part) for part in args.sessions.split(",")]
    with tempfile.TemporaryDirectory(prefix="lme-load-") as tmp:
        port = free_port()
        extra = ["--no-queue"] if args.no_queue else []
        server = start_memory_server(Path(tmp) / "memory.sqlite", port, *extra)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            print(
                "| sessions | adds | adds/s | add p50 ms | add p99 ms | search p50 ms |"
                " search p99 ms | lost | duplicated | foreign | errors | wall |"
            )
            print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for sessions in levels:
                print(asyncio.run(level(url, sessions, args.adds, args.searches)), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
