"""A complete memory backend in one file: sessions kept whole in SQLite, ranked by shared words.

Run a benchmark on it from the repository folder:

    lme-bench run configs/default.toml  # with, in the config:
    [memory]
    backend = "docs/example_backend.py:SessionNotes"
    params = { min_word = 3 }

and test it against the protocol's promises with the conformance suite
(TestExampleBackend in tests/backends/test_conformance_builtin.py shows the few lines that takes).
The plug-in API reference (docs site: Reference > Plug-in API) documents every type it uses;
a backend that talks to a server raises TransientMemoryError for a fault worth retrying.

It keeps each session as one note (the turns joined), so its hits name their session
(PROVENANCE) but no turn: lme-bench scores turn granularity by matching hit text to turns,
reported as "attributed"; a note rarely shares half its words with one turn, so most of its
turn rows are not applicable.
"""

from __future__ import annotations

import re
import sqlite3
from typing import ClassVar

from pydantic import Field

from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Usage,
)


class SessionNotesParams(BackendParams):
    min_word: int = Field(default=3, ge=1, le=10, description="shortest word that counts")


class SessionNotes:
    Params: ClassVar[type[BackendParams]] = SessionNotesParams
    name: ClassVar[str] = "session-notes"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.DELETES}
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        assert isinstance(params, SessionNotesParams)
        self.word = re.compile(rf"\w{{{params.min_word},}}")
        env.data_dir.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(env.data_dir / "notes.sqlite", check_same_thread=False)
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY, title TEXT UNIQUE);"
            "CREATE TABLE IF NOT EXISTS notes (memory INTEGER, session_key TEXT, date TEXT,"
            " text TEXT, PRIMARY KEY (memory, session_key));"
        )

    async def open_memory(self, title: str) -> str:
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO memories (title) VALUES (?)", (title,))
        (memory_id,) = self.db.execute(
            "SELECT id FROM memories WHERE title = ?", (title,)
        ).fetchone()
        return str(memory_id)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        text = "\n".join(f"{turn.role}: {turn.content}" for turn in session.turns)
        with self.db:  # the primary key makes a resent session replace itself
            self.db.execute(
                "INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?)",
                (int(memory_id), session.key, session.date, text),
            )

    async def wait_until_ready(self, memory_id: str) -> None:
        return None  # every write is committed before ingest_session returns

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        wanted = set(self.word.findall(query.lower()))
        rows = self.db.execute(
            "SELECT session_key, date, text FROM notes WHERE memory = ?", (int(memory_id),)
        ).fetchall()
        scored = []
        for session_key, date, text in rows:
            words = self.word.findall(text.lower())
            score = sum(word in wanted for word in words) / (len(words) or 1)
            if score > 0:
                scored.append(Hit(text, score, date=date, session_key=session_key))
        scored.sort(key=lambda hit: -hit.score)
        return scored[:k]

    async def delete_memory(self, memory_id: str) -> None:
        with self.db:
            self.db.execute("DELETE FROM notes WHERE memory = ?", (int(memory_id),))
            self.db.execute("DELETE FROM memories WHERE id = ?", (int(memory_id),))

    def usage(self) -> Usage:
        return Usage()  # no model or embedding calls

    async def close(self) -> None:
        self.db.close()
