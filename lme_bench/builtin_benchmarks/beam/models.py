"""Neutral typed records of one BEAM conversation and its probing questions.

What a memory system or a reader may see (`Conversation`, `ProbingQuestion`) holds no gold:
the rubric, the reference answer, the ability and the source chat ids are on `BeamGold`,
which only the scorer reads. A question's public key is made from its chat and text alone, and
public questions are sorted by it: a key or an order following the abilities would tell the
reader what is being tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, get_args

Ability = Literal[
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
]
# In the order the official report's columns use.
ABILITIES: tuple[Ability, ...] = get_args(Ability)
TIERS = ("100K", "128K", "500K", "1M", "10M")
Role = Literal["user", "assistant"]

# The field each ability keeps its reference answer in (instruction and preference following
# state the expected behaviour instead of an answer).
REFERENCE_FIELDS: dict[str, str] = {
    "abstention": "ideal_response",
    "contradiction_resolution": "ideal_answer",
    "summarization": "ideal_summary",
    "instruction_following": "expected_compliance",
    "preference_following": "expected_compliance",
}
DEFAULT_REFERENCE_FIELD = "answer"


@dataclass(frozen=True, slots=True)
class Turn:
    role: Role
    text: str
    message_id: int | None = None  # the message's `id` in chat.json (gold side: evidence)


@dataclass(frozen=True, slots=True)
class Session:
    """One batch of the chat: the turns between two time anchors, in order."""

    index: int  # position in the conversation, from 0
    date: date  # from the batch's time anchor
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    conversation_id: str  # tier and chat number, e.g. "100K-1"
    sessions: tuple[Session, ...]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


@dataclass(frozen=True, slots=True)
class ProbingQuestion:
    """A question as the system under test sees it: its conversation, an opaque key, the text."""

    conversation_id: str
    key: str  # "q" + a digest of the chat and the text
    question: str

    @property
    def question_id(self) -> str:
        return f"{self.conversation_id}:{self.key}"


@dataclass(frozen=True, slots=True)
class BeamGold:
    """The scorer's side of one probing question."""

    question_id: str
    conversation_id: str
    ability: Ability
    index: int  # position within its ability in the file (the official evaluator's index)
    rubric: tuple[str, ...]  # the items the judge scores; event ordering's reference order
    reference_answer: str | None
    ordering_tested: tuple[str, ...] = ()  # event ordering only: the items with their ranks
    extra: dict[str, Any] = field(default_factory=dict)  # every other field, as in the file


@dataclass(frozen=True, slots=True)
class ProbingSet:
    conversation_id: str
    questions: tuple[ProbingQuestion, ...]
    gold: dict[str, BeamGold]  # by question_id

    def gold_for(self, question: ProbingQuestion) -> BeamGold:
        return self.gold[question.question_id]
