"""Raw ingestion (no LLM): every turn stored verbatim as one entry, session by session.

Each entry is tagged with the opaque session key, the turn index (0-based, over all turns of
the session), the role and the session date, so any ranking maps back to sessions and turns.
One write per session; re-ingesting the same question adds nothing (entries are idempotent).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.memory.base import MemoryBackend
from lme_bench.memory.types import NewEntry

SUMMARY_LIMIT = 512  # Mycelian's entry summary limit, in characters


def session_entries(session: SessionView) -> list[NewEntry]:
    entries = []
    for index, turn in enumerate(session.turns):
        summary = turn.content
        if len(summary) > SUMMARY_LIMIT:
            summary = summary[: SUMMARY_LIMIT - 1] + "…"
        tags = {
            "session_key": session.key,
            "turn_index": str(index),
            "role": turn.role,
            "session_date": session.date,
        }
        entries.append(NewEntry(raw_entry=turn.content, summary=summary, tags=tags))
    return entries


@dataclass(frozen=True, slots=True)
class SessionIngest:
    session_key: str
    turns: int
    seconds: float


async def ingest_raw(
    view: QuestionView, backend: MemoryBackend, vault_id: str, memory_id: str
) -> list[SessionIngest]:
    done = []
    for session in view.sessions:
        started = time.perf_counter()
        await backend.add_entries(vault_id, memory_id, session_entries(session))
        done.append(SessionIngest(session.key, len(session.turns), time.perf_counter() - started))
    await backend.await_consistency(memory_id)
    return done
