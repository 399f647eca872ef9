"""Leak-safe views: what a memory system, a memory agent or a QA model may see of a question.

Sessions are keyed by opaque keys (`s000`, `s001`, … in date order), turns keep only role,
content and a named speaker (LoCoMo's), and the answer, the evidence session ids and
`has_answer` stay on the `Instance`.
`SessionKeyMap` is the scorer's way back from a key to the original session.
"""

from __future__ import annotations

from dataclasses import dataclass

from lme_bench.dataset.models import Instance


@dataclass(frozen=True, slots=True)
class TurnView:
    role: str
    content: str
    speaker: str | None = None  # the speaker's name where the benchmark has named speakers


@dataclass(frozen=True, slots=True)
class SessionView:
    key: str
    date: str
    turns: tuple[TurnView, ...]


@dataclass(frozen=True, slots=True)
class QuestionView:
    """A question as the system under test sees it: no type, no answer, no session ids."""

    question: str
    question_date: str
    sessions: tuple[SessionView, ...]


def session_key(rank: int) -> str:
    return f"s{rank:03d}"


@dataclass(frozen=True, slots=True)
class SessionKeyMap:
    """Opaque session key -> haystack position (scorer side only)."""

    positions: dict[str, int]

    def position(self, key: str) -> int | None:
        return self.positions.get(key)

    def key_at(self, position: int) -> str:
        return next(key for key, at in self.positions.items() if at == position)


def session_keys(instance: Instance) -> SessionKeyMap:
    """The key map alone (what scoring needs), without building the view."""
    return SessionKeyMap({session_key(r): p for r, p in enumerate(instance.session_order())})


def make_view(instance: Instance) -> tuple[QuestionView, SessionKeyMap]:
    keys = session_keys(instance)
    sessions = tuple(
        SessionView(
            key=key,
            date=instance.haystack_dates[position],
            turns=tuple(
                TurnView(role=t.role, content=t.content, speaker=t.speaker)
                for t in instance.haystack_sessions[position]
            ),
        )
        for key, position in keys.positions.items()  # in session order
    )
    view = QuestionView(
        question=instance.question, question_date=instance.question_date, sessions=sessions
    )
    return view, keys
