"""Raw ingestion (no LLM): every turn stored verbatim as one entry, session by session.

Each entry is tagged with the opaque session key, the turn index (0-based, over all turns of
the session), the role and the session date, so any ranking maps back to sessions and turns.

Checkpointed per session (checkpoint.py) so a retry writes nothing twice, whatever the memory
system: a session is saved as pending before its entries are sent, and every session is
marked done once the memory confirms it stores them all. A retry skips done sessions; for the
others it first reads which turns the memory already holds (a write may have landed before
the failure) and sends only the missing ones.
"""

from __future__ import annotations

import time

from lme_bench.backends.entry_memory import EntryMemory
from lme_bench.backends.entry_types import NewEntry
from lme_bench.common.stop_signal import check_stopping
from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.held import TurnKey, held_turns, missing
from lme_bench.ingest.records import SessionRecord

SUMMARY_LIMIT = 512  # Mycelian's entry summary limit, in characters
MODE = "raw"


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
    question_id: str,
    view: QuestionView,
    backend: EntryMemory,
    vault_id: str,
    memory_id: str,
    checkpoints: Checkpoints,
    *,
    fresh: bool,
) -> list[SessionRecord]:
    """`fresh`: the memory held nothing when this ingestion began (nothing to skip)."""
    records: list[SessionRecord] = []
    sent: list[SessionRecord] = []
    held: set[TurnKey] | None = set() if fresh else None
    for index, session in enumerate(view.sessions):
        check_stopping()
        saved = checkpoints.load(memory_id, session.key, MODE)
        if saved is not None and saved[0] == "done":
            record = saved[1]
            record.resumed = True
            records.append(record)
            continue
        started = time.perf_counter()
        entries = session_entries(session)
        if held is None:  # once per attempt, and only for a memory that held something
            held = await held_turns(backend, vault_id, memory_id)
        to_send = missing(entries, held)
        record = SessionRecord(
            question_id=question_id,
            session_key=session.key,
            session_index=index,
            mode=MODE,
            turns=len(session.turns),
            memory_calls={"add_entry": len(to_send)},
            entries_written=len(entries),  # what the memory holds of the session
            resumed=len(to_send) < len(entries),
        )
        checkpoints.save_pending(memory_id, record, [], None)  # entries: remade from the view
        await backend.add_entries(vault_id, memory_id, to_send)
        record.seconds = time.perf_counter() - started
        records.append(record)
        sent.append(record)
    await backend.await_consistency(memory_id)
    checkpoints.mark_all_done(memory_id, sent)
    return records
