"""Raw ingestion (no LLM): every turn stored verbatim as one entry, session by session.

Each entry is tagged with the opaque session key, the turn index (0-based, over all turns of
the session), the role and the session date, so any ranking maps back to sessions and turns.
One write per session; re-ingesting the same question adds nothing (entries are idempotent).
"""

from __future__ import annotations

import time

from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.ingest.records import SessionRecord
from lme_bench.memory.base import MemoryBackend
from lme_bench.memory.types import NewEntry

SUMMARY_LIMIT = 512  # Mycelian's entry summary limit, in characters


def session_entries(session: SessionView) -> list[NewEntry]:
    entries = []
    for index, turn in enumerate(session.turns):
        if not turn.content.strip():
            continue  # nothing to remember (and memory systems refuse an empty summary)
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


async def ingest_raw(
    question_id: str, view: QuestionView, backend: MemoryBackend, vault_id: str, memory_id: str
) -> list[SessionRecord]:
    records = []
    for index, session in enumerate(view.sessions):
        started = time.perf_counter()
        entries = session_entries(session)
        await backend.add_entries(vault_id, memory_id, entries)
        records.append(
            SessionRecord(
                question_id=question_id,
                session_key=session.key,
                session_index=index,
                mode="raw",
                turns=len(session.turns),
                memory_calls={"add_entry": len(entries)},
                entries_written=len(entries),
                seconds=time.perf_counter() - started,
            )
        )
    await backend.await_consistency(memory_id)
    return records
