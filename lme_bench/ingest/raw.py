"""Raw ingestion (no LLM): every turn stored verbatim as one entry, session by session.

Each entry is tagged with the opaque session key, the turn index (0-based, over all turns of
the session), the role and the session date, so any ranking maps back to sessions and turns.

Checkpointed per session (checkpoint.py) so a retry writes nothing twice, whatever the memory
system: sessions are saved as pending before their entries are sent (a batch of sessions in
one commit, their entries in one call), and every session is marked done once the memory
confirms it stores them all. A retry skips done sessions; for the
others it first reads which turns the memory already holds (a write may have landed before
the failure) and sends only the missing ones.
"""

from __future__ import annotations

import time

from lme_bench.backends.entry_system import tagged_entries
from lme_bench.common.stop_signal import check_stopping
from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.entries.models import NewEntry
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.held import TurnKey, held_turns, missing
from lme_bench.ingest.records import SessionRecord

MODE = "raw"
# Sessions are written together until they hold this many entries: one checkpoint commit and
# one store transaction per batch (a whole S question is one batch; an M question about three).
BATCH_ENTRIES = 2_000


def session_entries(session: SessionView) -> list[NewEntry]:
    """One entry per non-empty turn, tagged with the session key, turn index, role and date."""
    turns = ((index, turn.role, turn.content) for index, turn in enumerate(session.turns))
    return tagged_entries(session.key, session.date, turns)


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
    saved = checkpoints.states(memory_id, MODE)
    batch: list[tuple[SessionRecord, list[NewEntry]]] = []
    batched = 0  # entries in the batch
    for index, session in enumerate(view.sessions):
        check_stopping()
        found = saved.get(session.key)
        if found is not None and found[0] == "done":
            record = found[1]
            record.resumed = True
            records.append(record)
            continue
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
        records.append(record)
        batch.append((record, to_send))
        batched += len(to_send)
        if batched >= BATCH_ENTRIES:
            await _write(backend, vault_id, memory_id, checkpoints, batch)
            sent += [r for r, _ in batch]
            batch, batched = [], 0
    if batch:
        await _write(backend, vault_id, memory_id, checkpoints, batch)
        sent += [r for r, _ in batch]
    await backend.await_consistency(memory_id)
    checkpoints.mark_all_done(memory_id, sent)
    return records


async def _write(
    backend: EntryMemory,
    vault_id: str,
    memory_id: str,
    checkpoints: Checkpoints,
    batch: list[tuple[SessionRecord, list[NewEntry]]],
) -> None:
    """Sessions saved as pending in one commit, then their entries sent in one call; each
    session's `seconds` is its share of the write, by entries."""
    check_stopping()
    started = time.perf_counter()
    checkpoints.save_all_pending(memory_id, [record for record, _ in batch])
    entries = [entry for _, part in batch for entry in part]
    await backend.add_entries(vault_id, memory_id, entries)
    seconds = time.perf_counter() - started
    for record, sent in batch:
        record.seconds = seconds * len(sent) / max(len(entries), 1)
