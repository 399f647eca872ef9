"""The one ingestion loop: a question's sessions in date order, each through a writer,
checkpointed per session (checkpoint.py) so a retried question resumes where it stopped.

Sessions marked done are skipped; every other session goes to the writer, which is told whether
an earlier attempt left it pending. What a writer is:
- sessions as they are (as_they_are.py): the turns themselves, no model call of ours;
- the memory agent (agent.py with our entry tools, agent_tools.py with the system's own).
"""

from __future__ import annotations

from typing import Protocol

from lme_bench.common.fault_points import exit_point
from lme_bench.common.limits import numbered_sessions
from lme_bench.common.stop_signal import check_stopping
from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord


class SessionWriter(Protocol):
    """Writes one question's sessions to its memory."""

    mode: str  # the ingestion mode its checkpoints and records are kept under

    async def start(self, memory_id: str) -> None:
        """Before the first session (the agent's prompts and tools are loaded here)."""
        ...

    async def write(
        self, question_id: str, index: int, session: SessionView, memory_id: str, pending: bool
    ) -> SessionRecord:
        """Write one session; `pending`: an earlier attempt began it and did not finish."""
        ...

    async def finish(self, memory_id: str) -> None:
        """After the last session: once it returns, every session written is marked done."""
        ...


async def feed_sessions(
    question_id: str,
    view: QuestionView,
    memory_id: str,
    checkpoints: Checkpoints,
    writer: SessionWriter,
) -> list[SessionRecord]:
    """Every session of the question through `writer`; one record per session."""
    await writer.start(memory_id)
    saved = checkpoints.states(memory_id, writer.mode)
    records: list[SessionRecord] = []
    for index, session in numbered_sessions(view.sessions):
        check_stopping()
        found = saved.get(session.key)
        if found is not None and found[0] == "done":
            record = found[1]
            record.resumed = True
            records.append(record)
            continue
        pending = found is not None
        records.append(await writer.write(question_id, index, session, memory_id, pending))
        exit_point("ingest", question_id, index)  # a fault-injection test's kill, if it asks
    await writer.finish(memory_id)
    return records
