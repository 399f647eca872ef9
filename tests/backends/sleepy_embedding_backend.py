"""A one-file backend that embeds with the run's embedder (`env.embedder`) and whose search
sleeps a fixed time: turns kept with their vectors in SQLite, ranked by cosine. Its search's
own time is the sleep plus embedding one query, whatever else the process embeds meanwhile.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import ClassVar

import numpy
from pydantic import Field

from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Usage,
)


class SleepyParams(BackendParams):
    sleep_ms: int = Field(default=20, ge=0, description="milliseconds each search sleeps")


class SleepySearch:
    Params: ClassVar[type[BackendParams]] = SleepyParams
    name: ClassVar[str] = "sleepy-embedding"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE}
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        assert isinstance(params, SleepyParams) and env.embedder is not None
        self.sleep_s = params.sleep_ms / 1000
        self.embedder = env.embedder()
        self.db = sqlite3.connect(
            env.data_dir / "turns.sqlite", check_same_thread=False, timeout=60
        )
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY, title TEXT UNIQUE);"
            "CREATE TABLE IF NOT EXISTS turns (memory INTEGER, session_key TEXT, turn INTEGER,"
            " role TEXT, date TEXT, text TEXT, vector BLOB,"
            " PRIMARY KEY (memory, session_key, turn));"
        )

    async def open_memory(self, title: str) -> str:
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO memories (title) VALUES (?)", (title,))
        (memory_id,) = self.db.execute(
            "SELECT id FROM memories WHERE title = ?", (title,)
        ).fetchone()
        return str(memory_id)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        turns = [t for t in session.turns if t.content.strip()]
        vectors = await asyncio.to_thread(self.embedder.embed, [t.content for t in turns])
        rows = [
            (int(memory_id), session.key, t.index, t.role, session.date, t.content, v.tobytes())
            for t, v in zip(turns, numpy.asarray(vectors, dtype=numpy.float32), strict=True)
        ]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    async def wait_until_ready(self, memory_id: str) -> None:
        return None

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        wanted = numpy.asarray(self.embedder.embed([query]), dtype=numpy.float32)[0]
        await asyncio.sleep(self.sleep_s)
        rows = self.db.execute(
            "SELECT session_key, turn, role, date, text, vector FROM turns WHERE memory = ?",
            (int(memory_id),),
        ).fetchall()
        hits = [
            Hit(
                text,
                float(numpy.frombuffer(vector, dtype=numpy.float32) @ wanted),
                date=date,
                session_key=key,
                turn_index=turn,
                role=role,
            )
            for key, turn, role, date, text, vector in rows
        ]
        hits.sort(key=lambda hit: -hit.score)
        return hits[:k]

    async def delete_memory(self, memory_id: str) -> None:
        raise NotImplementedError

    def usage(self) -> Usage:
        counts = self.embedder.counts
        return Usage(embedding_calls=counts.calls, embedded_texts=counts.texts)

    async def close(self) -> None:
        self.db.close()
