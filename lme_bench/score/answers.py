"""Answers written by any harness: what every format gives (Answer, AnswersFile), and
LongMemEval's `hypotheses.jsonl` (one JSON object a line: question_id, hypothesis; other keys
are kept by the official script and ignored here). Bad input is one ScoreInputError naming the
file, the line and the field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.common.json_lines import json_object_lines
from lme_bench.config.settings import ConfigError
from lme_bench.dataset.shards import file_sha256

HYPOTHESES = "longmemeval-hypotheses"  # the format of an official hypotheses.jsonl
# Keys that mark a line of another format, and what that format is.
OTHER_FORMATS = {
    "retrieval_results": "a LongMemEval retrieval log (its first line is not)",
    "autoeval_label": "an official eval-results file (already judged)",
}


class ScoreInputError(ConfigError):
    """An answers file (or the dataset it is scored against) that cannot be scored; names the
    file, the line and the field."""


@dataclass(frozen=True, slots=True)
class Answer:
    question_id: str
    hypothesis: str
    place: str  # where the file holds it, for errors: "line 12", "conv-26 qa[3]"
    question: str | None = None  # the question's text where the file repeats it
    ranked: tuple[str, ...] | None = None  # a retrieval log's ranking: official corpus ids


@dataclass(frozen=True, slots=True)
class AnswersFile:
    path: Path
    format: str
    sha256: str
    answers: list[Answer]


def _text_field(item: dict[str, Any], name: str, place: str) -> str:
    if name not in item:
        raise ScoreInputError(f"{place}: field {name} is missing")
    value = item[name]
    if not isinstance(value, str) or (name == "question_id" and not value):
        raise ScoreInputError(f"{place}: field {name}: expected text, got {value!r}")
    return value


def _other_format(item: dict[str, Any], place: str) -> None:
    for key, what in OTHER_FORMATS.items():
        if key in item:
            raise ScoreInputError(
                f"{place}: field {key}: this is {what}, not a hypotheses file (question_id,"
                " hypothesis)"
            )


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoreInputError(f"{path}: cannot read the answers file: {exc}") from None


def read_hypotheses(path: Path, text: str) -> AnswersFile:
    """Every line of a hypotheses.jsonl; duplicate question ids are an error naming both
    lines."""
    answers: list[Answer] = []
    seen: dict[str, int] = {}
    for number, place, item in json_object_lines(path, text, ScoreInputError):
        _other_format(item, place)
        question_id = _text_field(item, "question_id", place)
        if question_id in seen:
            raise ScoreInputError(
                f"{place}: field question_id: {question_id!r} already on line {seen[question_id]}"
            )
        seen[question_id] = number
        hypothesis = _text_field(item, "hypothesis", place)
        answers.append(Answer(question_id, hypothesis, f"line {number}"))
    if not answers:
        raise ScoreInputError(f"{path}: the answers file holds no answers")
    return AnswersFile(path, HYPOTHESES, file_sha256(path), answers)
