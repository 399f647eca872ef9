"""Sessions as they are (ingestion mode `raw`, no model call of ours): the writers of the
ingestion loop (loop.py) that hand the memory the turns themselves.

- `WholeSessions`: any memory system, one `ingest_session` per session; the system does its own
  extraction and indexing. The protocol requires a resent session not to be stored twice.
- `TurnEntries`: a system with an entry surface, one entry per non-empty turn tagged with the
  opaque session key, the turn index (0-based, over all turns of the session), the role and the
  session date, so any ranking maps back to sessions and turns. Sessions are written together
  until they hold `BATCH_ENTRIES` entries: one checkpoint commit and one write per batch (a whole
  S question is one batch). A resumed ingestion first reads which turns the memory holds (a write
  may have landed before the failure) and sends only the missing ones, so no memory system,
  even one that does not de-duplicate writes, stores a turn twice.

Both save a session as pending before it is sent and mark every session done once the memory
says it is ready (`finish`).
"""

from __future__ import annotations

from lme_bench.backends.entry_system import tagged_entries
from lme_bench.backends.protocol import MemorySystem, Session, Turn
from lme_bench.common.stop_signal import check_stopping
from lme_bench.common.waits import timed_call
from lme_bench.dataset.views import SessionView
from lme_bench.entries.capability import Entries
from lme_bench.entries.models import NewEntry
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.held import TurnKey, held_turns, missing
from lme_bench.ingest.records import SessionRecord
from lme_bench.ingest.system_calls import add_system_calls

MODE = "raw"
BATCH_ENTRIES = 2_000


def protocol_session(session: SessionView) -> Session:
    turns = tuple(Turn(i, t.role, t.content, t.speaker) for i, t in enumerate(session.turns))
    return Session(key=session.key, date=session.date, turns=turns)


def session_entries(session: SessionView) -> list[NewEntry]:
    """One entry per non-empty turn, tagged with the session key, turn index, role and date."""
    turns = ((index, turn.role, turn.content) for index, turn in enumerate(session.turns))
    return tagged_entries(session.key, session.date, turns)


def _record(question_id: str, index: int, session: SessionView) -> SessionRecord:
    return SessionRecord(
        question_id=question_id,
        session_key=session.key,
        session_index=index,
        mode=MODE,
        turns=len(session.turns),
    )


class WholeSessions:
    """Each session to the system's `ingest_session`."""

    mode = MODE

    def __init__(self, system: MemorySystem, checkpoints: Checkpoints) -> None:
        self.system = system
        self.checkpoints = checkpoints
        self.sent: list[SessionRecord] = []

    async def start(self, memory_id: str) -> None:
        return None

    async def write(
        self, question_id: str, index: int, session: SessionView, memory_id: str, pending: bool
    ) -> SessionRecord:
        record = _record(question_id, index, session)
        record.memory_calls = {"ingest_session": 1}
        record.resumed = pending
        self.checkpoints.save_pending(memory_id, record, [], None)
        sent = protocol_session(session)
        before = self.system.usage()
        with timed_call() as clock:  # the system's call alone
            await self.system.ingest_session(memory_id, sent)
        record.seconds, record.wait_seconds = clock.own_seconds, clock.wait_seconds
        add_system_calls(record, self.system, before)
        if record.system_model_calls:  # what it spent, checkpointed before the next session
            self.checkpoints.save_pending(memory_id, record, [], None)
        self.sent.append(record)
        return record

    async def finish(self, memory_id: str) -> None:
        before = self.system.usage()
        await self.system.wait_until_ready(memory_id)
        if self.sent:  # work the system deferred to now: the last session's
            add_system_calls(self.sent[-1], self.system, before)
        self.checkpoints.mark_all_done(memory_id, self.sent)


class TurnEntries:
    """Each turn an entry, written in batches through the entry surface."""

    mode = MODE

    def __init__(self, entries: Entries, checkpoints: Checkpoints, *, fresh: bool) -> None:
        """`fresh`: the memory held nothing when this ingestion began (nothing to skip)."""
        self.entries = entries
        self.checkpoints = checkpoints
        self.held: set[TurnKey] | None = set() if fresh else None
        self.batch: list[tuple[SessionRecord, list[NewEntry]]] = []
        self.batched = 0  # entries in the batch
        self.sent: list[SessionRecord] = []

    async def start(self, memory_id: str) -> None:
        return None

    async def write(
        self, question_id: str, index: int, session: SessionView, memory_id: str, pending: bool
    ) -> SessionRecord:
        entries = session_entries(session)
        if self.held is None:  # once per attempt, and only for a memory that held something
            self.held = await held_turns(self.entries, memory_id)
        to_send = missing(entries, self.held)
        record = _record(question_id, index, session)
        record.memory_calls = {"add_entry": len(to_send)}
        record.entries_written = len(entries)  # what the memory holds of the session
        record.resumed = len(to_send) < len(entries)
        self.batch.append((record, to_send))
        self.batched += len(to_send)
        if self.batched >= BATCH_ENTRIES:
            await self._write(memory_id)
        return record

    async def finish(self, memory_id: str) -> None:
        if self.batch:
            await self._write(memory_id)
        await self.entries.await_consistency(memory_id)
        self.checkpoints.mark_all_done(memory_id, self.sent)

    async def _write(self, memory_id: str) -> None:
        """The batch saved as pending in one commit, then its entries sent in one call; each
        session's `seconds` (and `wait_seconds`) is its share of the write, by entries."""
        check_stopping()
        batch, self.batch, self.batched = self.batch, [], 0
        self.checkpoints.save_all_pending(memory_id, [record for record, _ in batch])
        entries = [entry for _, part in batch for entry in part]
        with timed_call() as clock:  # the system's call alone
            await self.entries.add_entries(memory_id, entries)
        for record, sent in batch:
            share = len(sent) / max(len(entries), 1)
            record.seconds, record.wait_seconds = (
                clock.own_seconds * share,
                clock.wait_seconds * share,
            )
        self.sent += [record for record, _ in batch]
