"""The docs' example backend with broken provenance, as an outside team's first attempt might
have it: its hits name sessions it was never given, or the wrong ones.

- ShiftedKeys: each hit names the next session's key (`s004` for the note of `s003`): an
  off-by-one in the backend's own numbering;
- WrongKeys: each hit names a key of the backend's own making (`note-s003`).

Everything else (storing, ranking, deleting) is the example backend's, so the run's figures
differ only by the names the hits carry."""

from __future__ import annotations

from dataclasses import replace

from docs.example_backend import SessionNotes
from lme_bench.backends.protocol import Hit


class ShiftedKeys(SessionNotes):
    name = "shifted-keys"

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        hits = await super().search(memory_id, query, question_date=question_date, k=k)
        return [replace(h, session_key=f"s{int(str(h.session_key)[1:]) + 1:03d}") for h in hits]


class WrongKeys(SessionNotes):
    name = "wrong-keys"

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        hits = await super().search(memory_id, query, question_date=question_date, k=k)
        return [replace(h, session_key=f"note-{h.session_key}") for h in hits]
