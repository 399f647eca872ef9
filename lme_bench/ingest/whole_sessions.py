"""Session ingestion for memory systems without an entry surface: each session goes to the
system as it is (`ingest_session`), and the system does its own extraction and indexing.

Checkpointed per session as raw ingestion is: a session is saved as pending before it is sent
and every session is marked done once the system says it is ready. A retry skips done sessions
and sends the others again; the protocol requires a resent session not to be stored twice.
"""

from __future__ import annotations

import time

from lme_bench.backends.protocol import MemorySystem, Session, Turn
from lme_bench.common.stop_signal import check_stopping
from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord

MODE = "raw"


def protocol_session(session: SessionView) -> Session:
    turns = tuple(Turn(i, t.role, t.content) for i, t in enumerate(session.turns))
    return Session(key=session.key, date=session.date, turns=turns)


async def ingest_sessions(
    question_id: str,
    view: QuestionView,
    system: MemorySystem,
    memory_id: str,
    checkpoints: Checkpoints,
) -> list[SessionRecord]:
    records: list[SessionRecord] = []
    sent: list[SessionRecord] = []
    for index, session in enumerate(view.sessions):
        check_stopping()
        saved = checkpoints.load(memory_id, session.key, MODE)
        if saved is not None and saved[0] == "done":
            record = saved[1]
            record.resumed = True
            records.append(record)
            continue
        started = time.perf_counter()
        record = SessionRecord(
            question_id=question_id,
            session_key=session.key,
            session_index=index,
            mode=MODE,
            turns=len(session.turns),
            memory_calls={"ingest_session": 1},
            resumed=saved is not None,
        )
        checkpoints.save_pending(memory_id, record, [], None)
        await system.ingest_session(memory_id, protocol_session(session))
        record.seconds = time.perf_counter() - started
        records.append(record)
        sent.append(record)
    await system.wait_until_ready(memory_id)
    checkpoints.mark_all_done(memory_id, sent)
    return records
