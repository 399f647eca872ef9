"""The docs' example backend, recording every argument lme-bench hands it (one JSON line per
call, in its data folder), so a test can check what reached the memory system."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from docs.example_backend import SessionNotes
from lme_bench.backends.protocol import BackendEnv, BackendParams, Hit, Session


class RecordingNotes(SessionNotes):
    name = "recording-notes"

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        super().__init__(params, env)
        self.log = Path(env.data_dir) / "calls.jsonl"

    def _record(self, call: str, **args: Any) -> None:
        with self.log.open("a") as out:
            out.write(json.dumps({"call": call, **args}) + "\n")

    async def open_memory(self, title: str) -> str:
        self._record("open_memory", title=title)
        return await super().open_memory(title)

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        self._record("ingest_session", memory_id=memory_id, session=asdict(session))
        await super().ingest_session(memory_id, session)

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        self._record("search", memory_id=memory_id, query=query, question_date=question_date, k=k)
        return await super().search(memory_id, query, question_date=question_date, k=k)
