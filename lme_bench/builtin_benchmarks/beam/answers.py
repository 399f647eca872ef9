"""BEAM answers in the shape its official evaluator (`src/evaluation/run_evaluation.py`) reads
(builtin_benchmarks.beam.export): one chat's file, `{ability: [{"question", "llm_response"},
…]}`, each list in the order of the chat's `probing_questions.json`. A question is named by its
ability and its place in that list; the chat is the dataset's one whose probing questions are
those of the file, word for word. A run writes one such file per chat
(beam/<tier>/<number>/results-lme-bench.json, builtin_benchmarks.beam.report)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import (
    Answer,
    AnswersFile,
    AnswersFormat,
    ScoreInputError,
    text_field,
)
from lme_bench.builtin_benchmarks.beam.models import ABILITIES
from lme_bench.builtin_benchmarks.beam.report import ANSWERS_NAME, EXPORT_FOLDER
from lme_bench.builtin_benchmarks.beam.stored import stored_beam_gold
from lme_bench.dataset.shards import QuestionRef, file_sha256

BEAM = "beam-answers"
RESPONSE = "llm_response"


def is_beam(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(k in ABILITIES and isinstance(v, list) for k, v in value.items())
    )


def read_beam(path: Path, text: str, value: dict[str, list[Any]]) -> AnswersFile:
    """Every answer, named `<ability>[<index>]` until the chat is known (`in_chat`)."""
    answers = []
    for ability, items in value.items():
        for index, item in enumerate(items):
            place = f"{ability}[{index}]"
            if not isinstance(item, dict):
                raise ScoreInputError(f"{path}: {place}: expected a JSON object")
            question = text_field(item, "question", f"{path}: {place}")
            response = text_field(item, RESPONSE, f"{path}: {place}")
            answers.append(Answer(place, response, place, question))
    if not answers:
        raise ScoreInputError(f"{path}: the answers file holds no answers")
    return AnswersFile(path, BEAM, file_sha256(path), answers)


def _by_place(refs: Sequence[QuestionRef]) -> dict[str, dict[str, QuestionRef]]:
    """By chat, each probing question's ref by `<ability>[<index>]`."""
    chats: dict[str, dict[str, QuestionRef]] = {}
    for ref in refs:
        gold = stored_beam_gold(ref.shard)
        chats.setdefault(gold.conversation_id, {})[f"{gold.ability}[{gold.index}]"] = ref
    return chats


def _fits(answers: AnswersFile, places: dict[str, QuestionRef]) -> bool:
    return all(
        a.place in places and places[a.place].load().question.strip() == (a.question or "").strip()
        for a in answers.answers
    )


def in_chat(answers: AnswersFile, refs: Sequence[QuestionRef], dataset: str) -> AnswersFile:
    """The answers named by the question ids of the one chat they answer; with no such chat,
    an error naming the first answer the dataset's (first) chat does not hold."""
    chats = _by_place(refs)
    fitting = [chat for chat, places in chats.items() if _fits(answers, places)]
    if len(fitting) != 1:
        if fitting:
            raise ScoreInputError(
                f"{answers.path}: the questions of chats {', '.join(sorted(fitting))} of"
                f" {dataset} are all these: name the chat's own folder as --dataset"
            )
        chat, places = next(iter(sorted(chats.items())), ("", {}))
        for answer in answers.answers:
            ref = places.get(answer.place)
            if ref is None:
                raise ScoreInputError(
                    f"{answers.path}: {answer.place}: no such probing question in chat {chat}"
                    f" of {dataset}"
                )
            if ref.load().question.strip() != (answer.question or "").strip():
                raise ScoreInputError(
                    f"{answers.path}: {answer.place}: field question: {answer.question!r} is not"
                    f" the question of chat {chat} ({ref.load().question!r})"
                )
        raise ScoreInputError(f"{answers.path}: no chat of {dataset} holds these questions")
    places = chats[fitting[0]]
    named = [replace(a, question_id=places[a.place].question_id) for a in answers.answers]
    return replace(answers, answers=named)


ANSWERS = AnswersFormat(
    name=BEAM,
    words="BEAM answers",
    recognises=lambda whole, first: is_beam(whole),
    read=read_beam,
    name_questions=in_chat,
    run_file=f"{EXPORT_FOLDER}/*/*/{ANSWERS_NAME}",  # a chat's, beam/<tier>/<number>/
)
