"""Typed models of one LongMemEval instance, as the official files hold it.

An `Instance` carries the gold labels (`answer`, `answer_session_ids`, `has_answer`, the original
session ids). Only the scorer may read them; everything that reaches a memory system or a model
goes through `Instance.view()` (see views.py).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

QuestionType = Literal[
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
]
QUESTION_TYPES: tuple[str, ...] = get_args(QuestionType)
ABSTENTION_SUFFIX = "_abs"


def is_abstention_id(question_id: str) -> bool:
    """The official test: `_abs` anywhere in the id (the official files put it at the end)."""
    return ABSTENTION_SUFFIX in question_id


# Official turns are a few KB (the longest ShareGPT answers tens of KB). A turn over this is a
# broken export or merged file, and would overflow any model's context in agent ingestion:
# better one error before any work than a run that fails or costs a fortune halfway.
MAX_TURN_CHARS = 262_144


class FieldProblem(ValueError):
    """A check over the whole question that still belongs to one field (for the error text)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


# "2023/05/30 (Tue) 23:40"; the weekday is informative only and not checked.
_DATE_RE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\w+\))?\s*(\d{1,2}):(\d{2})\s*$")


def parse_date(text: str) -> datetime:
    """Parse a LongMemEval date; raises ValueError naming the text when it is not one."""
    match = _DATE_RE.match(text)
    if match is None:
        raise ValueError(f"unparsable date {text!r} (expected like '2023/05/30 (Tue) 23:40')")
    year, month, day, hour, minute = (int(part) for part in match.groups())
    try:
        return datetime(year, month, day, hour, minute)
    except ValueError as exc:
        raise ValueError(f"unparsable date {text!r}: {exc}") from None


def _checked_date(value: Any) -> Any:
    if isinstance(value, str):
        parse_date(value)
    return value


LongMemEvalDate = Annotated[str, BeforeValidator(_checked_date)]


def _answer_as_text(value: Any) -> Any:
    # Some answers are JSON numbers: shown as the official judge's str.format shows them
    # (1 as "1", 1.0 as "1.0").
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return str(value)
    return value


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    role: Literal["user", "assistant"]
    # Empty content is accepted, as the official scripts accept it (the files hold noise).
    content: str
    has_answer: bool | None = None
    speaker: str | None = None  # a named speaker (LoCoMo); LongMemEval's files have none

    @field_validator("content")
    @classmethod
    def _not_huge(cls, content: str) -> str:
        if len(content) > MAX_TURN_CHARS:
            raise ValueError(
                f"turn of {len(content):,} characters, over the limit of {MAX_TURN_CHARS:,} per"
                " turn (LongMemEval turns are a few KB; is the file corrupt?)"
            )
        return content


class Instance(BaseModel):
    """One question with its haystack, gold labels included."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    question_id: str = Field(min_length=1)
    question_type: QuestionType
    question: str
    answer: Annotated[str, BeforeValidator(_answer_as_text)]
    question_date: LongMemEvalDate
    haystack_session_ids: list[str]
    haystack_dates: list[LongMemEvalDate]
    # A session may be empty (the official S and M files hold a few `[]` sessions), but a
    # question needs at least one session to remember.
    haystack_sessions: list[list[Turn]] = Field(
        validation_alias=AliasChoices("haystack_sessions", "sessions")
    )
    answer_session_ids: list[str]

    @field_validator("haystack_sessions")
    @classmethod
    def _has_sessions(cls, sessions: list[list[Turn]]) -> list[list[Turn]]:
        if not sessions:
            raise ValueError("no sessions: a question needs a chat history to remember")
        return sessions

    @model_validator(mode="after")
    def _check_parallel_lists(self) -> Instance:
        lengths = {
            "haystack_session_ids": len(self.haystack_session_ids),
            "haystack_dates": len(self.haystack_dates),
            "haystack_sessions": len(self.haystack_sessions),
        }
        if len(set(lengths.values())) != 1:
            shown = ", ".join(f"{name}={n}" for name, n in lengths.items())
            odd = next(n for n, v in lengths.items() if v != lengths["haystack_sessions"])
            raise FieldProblem(odd, f"parallel haystack lists differ in length ({shown})")
        return self

    @property
    def is_abstention(self) -> bool:
        return is_abstention_id(self.question_id)

    def session_order(self) -> list[int]:
        """Haystack positions in date order (stable for equal dates)."""
        stamps = [parse_date(d) for d in self.haystack_dates]
        return sorted(range(len(stamps)), key=lambda i: (stamps[i], i))
