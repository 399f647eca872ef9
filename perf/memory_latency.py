"""Embedded memory speed: ingest rate, search latency on an M-scale memory, per-call overhead
of the store called in-process vs our MCP server over stdio and streamable HTTP.

    python perf/memory_latency.py [--searches 300] [--calls 200]

Prints Markdown rows for docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from support import free_port, start_memory_server

from lme_bench.backends.mcp_session import McpSession
from lme_bench.config.settings import McpSettings
from lme_bench.dataset.generate import generate_dataset
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.views import make_view
from lme_bench.ingest.as_they_are import session_entries
from lme_bench.reference_memory.service import MemoryService
from lme_bench.reference_memory.store import EmbeddedStore
from lme_bench.run.steps import bundled_sample


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(name: str, ms: list[float]) -> str:
    return (
        f"| {name} | {len(ms)} | {statistics.median(ms):.2f} | {_pct(ms, 0.99):.2f} |"
        f" {max(ms):.2f} |"
    )


def m_scale_memory(folder: Path) -> tuple[EmbeddedStore, str, list[str], float, int]:
    data = folder / "m.json"
    generate_dataset(data, n_questions=1, scale="m", seed=0)
    instance = next(iter(iter_questions(data))).instance
    view, _ = make_view(instance)
    store = EmbeddedStore(folder / "memory.sqlite")
    memory = store.get_or_create_memory(store.get_or_create_vault("bench"), "m__bench")
    started = time.perf_counter()
    count = sum(store.add_entries(memory, session_entries(s)) for s in view.sessions)
    seconds = time.perf_counter() - started
    queries = [t.content for s in view.sessions for t in s.turns if t.role == "user"]
    return store, memory, queries, seconds, count


async def _timed(call: Callable[[], Awaitable[object]], n: int) -> list[float]:
    await call()  # warm: connection, index build
    out = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        out.append((time.perf_counter() - started) * 1000)
    return out


async def overhead(path: Path, memory: str, vault: str, calls: int) -> list[str]:
    args = {"memory_id": memory, "query": "kayak trip budget", "top_ke": 10, "top_kc": 2}
    rows = []
    service = MemoryService(EmbeddedStore(path), queue_writes=False)
    rows.append(
        _row(
            "in-process tool call: search_memories",
            await _timed(lambda: service.call("search_memories", args), calls),
        )
    )
    await service.close()
    port = free_port()
    server = start_memory_server(path, port)
    try:
        transports = {
            "stdio": McpSettings(
                transport="stdio",
                command=sys.executable,
                args=[
                    "-m",
                    "lme_bench_flows.command",
                    "memory",
                    "serve",
                    "--transport",
                    "stdio",
                    "--path",
                    str(path),
                ],
            ),
            "streamable HTTP": McpSettings(url=f"http://127.0.0.1:{port}/mcp"),
        }
        for name, settings in transports.items():
            session = McpSession(settings)
            rows.append(
                _row(
                    f"MCP {name}: search_memories",
                    await _timed(lambda s=session: s.call("search_memories", args), calls),
                )
            )
            entry = {"vault_id": vault, "memory_id": memory, "raw_entry": "x", "summary": "x"}
            counter = iter(range(10**9))
            rows.append(
                _row(
                    f"MCP {name}: add_entry",
                    await _timed(
                        lambda s=session, e=entry, c=counter: s.call(
                            "add_entry", {**e, "raw_entry": f"x{next(c)}"}
                        ),
                        calls,
                    ),
                )
            )
            await session.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lme-mem-") as tmp:
        folder = Path(tmp)
        store, memory, queries, seconds, count = m_scale_memory(folder)
        print(
            f"M-scale memory: {count} entries ingested in {seconds:.2f} s = "
            f"{count / seconds:,.0f} entries/s (raw, one transaction per session)"
        )
        started = time.perf_counter()
        store.search(memory, queries[0], top_ke=10)
        print(
            f"first search (builds the memory's FTS5 index): "
            f"{(time.perf_counter() - started) * 1000:.1f} ms"
        )
        questions = [q.instance.question for q in iter_questions(bundled_sample())]
        print("| call | n | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|")
        for name, pool in (("sample questions", questions), ("user turns", queries[1:])):
            latencies = []
            for i in range(args.searches):
                started = time.perf_counter()
                store.search(memory, pool[i % len(pool)], top_ke=10, top_kc=2)
                latencies.append((time.perf_counter() - started) * 1000)
            print(_row(f"in-process search, M-scale memory, {name} as queries", latencies))
        vault = store.get_or_create_vault("bench")
        store.close()
        for row in asyncio.run(overhead(folder / "memory.sqlite", memory, vault, args.calls)):
            print(row)
        print(json.dumps({"entries": count}))


if __name__ == "__main__":
    main()
