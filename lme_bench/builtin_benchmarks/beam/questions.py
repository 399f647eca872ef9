"""Reading a BEAM `probing_questions.json`: an object with one list of questions per ability.

Each question keeps its text on the public side (`ProbingQuestion`) and everything else on
the scorer's (`BeamGold`): the rubric (a list of items, every ability has one; event
ordering's is the reference order), the reference answer (under a field that differs by
ability), event ordering's `ordering_tested`, and the remaining fields as they are.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, cast

from lme_bench.builtin_benchmarks.beam.chat import conversation_id_of
from lme_bench.builtin_benchmarks.beam.errors import BeamFormatError
from lme_bench.builtin_benchmarks.beam.models import (
    ABILITIES,
    DEFAULT_REFERENCE_FIELD,
    REFERENCE_FIELDS,
    Ability,
    BeamGold,
    ProbingQuestion,
    ProbingSet,
)

PUBLIC_FIELDS = ("question",)
KNOWN_GOLD_FIELDS = ("rubric", "ordering_tested")


def question_key(conversation_id: str, question: str, taken: set[str]) -> str:
    """A stable key made from what the reader sees anyway (the chat and the question's text),
    so nothing about the ability can be computed from it; a repeated text gets `-2`, `-3`…"""
    digest = hashlib.sha256(f"{conversation_id}\x00{question}".encode()).hexdigest()
    key, n = f"q{digest[:10]}", 1
    while key in taken:
        n += 1
        key = f"q{digest[:10]}-{n}"
    taken.add(key)
    return key


def _texts(value: Any, error: Any, field: str, *, allow_empty: bool) -> tuple[str, ...]:
    if isinstance(value, str):
        raise error(f"{field} is a string; expected a list of items", field)
    if not isinstance(value, list):
        shown = "missing" if value is None else f"a {type(value).__name__}"
        raise error(f"{field} is {shown}, expected a list of texts", field)
    if not value and not allow_empty:
        raise error(f"{field} is empty", field)
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise error(f"expected non-empty text, got {item!r}", f"{field}[{i}]")
    return tuple(value)


def _question(
    path: Path, chat: str, ability: Ability, index: int, raw: Any, taken: set[str]
) -> tuple[ProbingQuestion, BeamGold]:
    name = f"{ability}[{index}]"

    def error(problem: str, field: str | None = None) -> BeamFormatError:
        return BeamFormatError(path, problem, chat=chat, question=name, field=field)

    if not isinstance(raw, dict):
        raise error(f"expected a question object, got {type(raw).__name__}")
    text = raw.get("question")
    if not isinstance(text, str) or not text.strip():
        raise error("missing or empty; expected the question's text", "question")
    rubric = _texts(raw.get("rubric"), error, "rubric", allow_empty=False)
    reference_field = REFERENCE_FIELDS.get(ability, DEFAULT_REFERENCE_FIELD)
    reference = raw.get(reference_field)
    if reference is not None and not isinstance(reference, str):
        raise error(f"expected text, got {type(reference).__name__}", reference_field)
    ordering: tuple[str, ...] = ()
    if ability == "event_ordering" and "ordering_tested" in raw:
        ordering = _texts(raw["ordering_tested"], error, "ordering_tested", allow_empty=True)
    skip = {*PUBLIC_FIELDS, *KNOWN_GOLD_FIELDS, reference_field}
    extra = {k: v for k, v in raw.items() if k not in skip}
    public = ProbingQuestion(chat, question_key(chat, text, taken), text)
    gold = BeamGold(
        question_id=public.question_id,
        conversation_id=chat,
        ability=ability,
        index=index,
        rubric=rubric,
        reference_answer=reference,
        ordering_tested=ordering,
        extra=extra,
    )
    return public, gold


def read_probing_questions(path: Path, conversation_id: str | None = None) -> ProbingSet:
    """The questions of one chat (`chats/<tier>/<n>/probing_questions/probing_questions.json`);
    public questions sorted by their opaque key, gold by question id."""
    path = Path(path)
    chat = conversation_id or conversation_id_of(path, levels_up=2)
    if chat is None:
        raise BeamFormatError(
            path,
            "cannot tell the chat from the path (expected .../<tier>/<n>/probing_questions/"
            "probing_questions.json); give its conversation id",
        )
    if not path.is_file():
        raise BeamFormatError(path, "not a file" if path.exists() else "no such file", chat=chat)
    try:
        data = json.loads(path.read_bytes())
    except UnicodeDecodeError:
        raise BeamFormatError(path, "not UTF-8 text", chat=chat) from None
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise BeamFormatError(path, problem, chat=chat) from None
    if not isinstance(data, dict):
        problem = f"expected an object of abilities, got a {type(data).__name__}"
        raise BeamFormatError(path, problem, chat=chat)
    questions: list[ProbingQuestion] = []
    gold: dict[str, BeamGold] = {}
    taken: set[str] = set()
    for ability, items in data.items():
        if ability not in ABILITIES:
            problem = f"unknown ability {ability!r} (expected one of {', '.join(ABILITIES)})"
            raise BeamFormatError(path, problem, chat=chat, field=ability)
        if not isinstance(items, list):
            problem = f"expected a list of questions, got a {type(items).__name__}"
            raise BeamFormatError(path, problem, chat=chat, field=ability)
        for index, raw in enumerate(items):
            public, record = _question(path, chat, cast(Ability, ability), index, raw, taken)
            questions.append(public)
            gold[public.question_id] = record
    if not questions:
        raise BeamFormatError(path, "no probing questions", chat=chat)
    questions.sort(key=lambda q: q.key)
    return ProbingSet(conversation_id=chat, questions=tuple(questions), gold=gold)
