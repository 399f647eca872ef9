"""Neutral records of LoCoMo data, split by who may see them.

`Conversation` and `Question` hold what the system under test may be given (a question keeps
its id and index for the harness's own bookkeeping); `Gold` holds the labels (category, answer,
adversarial answer, evidence dialog ids) and only the scorer reads it. What a memory system or
a reader model sees of a question is `QuestionView` (`public_view`): its text, its
conversation and its date, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

CATEGORIES = (1, 2, 3, 4, 5)
ADVERSARIAL = 5


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: str
    dia_id: str  # "D3:7": session 3, turn 7
    text: str  # the spoken text, then "[shares a photo: <caption>]" when a photo was shared


@dataclass(frozen=True, slots=True)
class Session:
    number: int  # N of `session_N`
    date_time: str  # as written, e.g. "1:56 pm on 8 May, 2023"
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    conversation_id: str  # the sample id, e.g. "conv-26"
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]  # in session-number order

    def turns(self) -> tuple[Turn, ...]:
        return tuple(turn for session in self.sessions for turn in session.turns)


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str  # "<sample id>-q<index>"; never shown to the system under test
    conversation_id: str
    index: int  # position in the sample's `qa` list
    text: str


@dataclass(frozen=True, slots=True)
class Gold:
    """The labels of one question: for the scorer only."""

    question_id: str
    category: int
    answer: str | None  # categories 1-4 (numbers in the file become their text)
    adversarial_answer: str | None  # category 5's tempting wrong answer
    evidence: tuple[str, ...]  # dialog ids as written (a few in the real file are malformed)


@dataclass(frozen=True, slots=True)
class QuestionView:
    """A question as a memory system or reader model sees it."""

    conversation_id: str
    question: str
    question_date: datetime | None  # LoCoMo questions carry no date of their own


@dataclass(frozen=True, slots=True)
class Sample:
    """One LoCoMo conversation with its questions and, aligned with them, their gold labels."""

    conversation: Conversation
    questions: tuple[Question, ...]
    gold: tuple[Gold, ...]

    def gold_for(self, question_id: str) -> Gold:
        for gold in self.gold:
            if gold.question_id == question_id:
                return gold
        raise KeyError(question_id)


def question_id(sample_id: str, index: int) -> str:
    return f"{sample_id}-q{index}"


def photo_text(text: str, caption: str | None) -> str:
    """A turn's text with its shared photo's caption written out."""
    if caption is None or not caption.strip():
        return text
    shared = f"[shares a photo: {caption.strip()}]"
    return f"{text} {shared}" if text else shared


def public_view(question: Question) -> QuestionView:
    return QuestionView(
        conversation_id=question.conversation_id, question=question.text, question_date=None
    )
