"""LongMemEval's `hypotheses.jsonl`, as any harness writes it: one JSON object a line,
question_id and hypothesis (other keys are kept by the official script and ignored here). Bad
input is one ScoreInputError naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import (
    Answer,
    AnswersFile,
    AnswersFormat,
    ScoreInputError,
    text_field,
)
from lme_bench.common.json_lines import json_object_lines
from lme_bench.dataset.shards import file_sha256

HYPOTHESES = "longmemeval-hypotheses"  # the format of an official hypotheses.jsonl
# Keys that mark a line of another format, and what that format is.
OTHER_FORMATS = {
    "retrieval_results": "a LongMemEval retrieval log (its first line is not)",
    "autoeval_label": "an official eval-results file (already judged)",
}


def _other_format(item: dict[str, Any], place: str) -> None:
    for key, what in OTHER_FORMATS.items():
        if key in item:
            raise ScoreInputError(
                f"{place}: field {key}: this is {what}, not a hypotheses file (question_id,"
                " hypothesis)"
            )


def _question_id(item: dict[str, Any], place: str) -> str:
    question_id = text_field(item, "question_id", place)
    if not question_id:
        raise ScoreInputError(f"{place}: field question_id: expected text, got ''")
    return question_id


def read_hypotheses(path: Path, text: str, whole: Any = None) -> AnswersFile:
    """Every line of a hypotheses.jsonl; duplicate question ids are an error naming both
    lines."""
    answers: list[Answer] = []
    seen: dict[str, int] = {}
    for number, place, item in json_object_lines(path, text, ScoreInputError):
        _other_format(item, place)
        question_id = _question_id(item, place)
        if question_id in seen:
            raise ScoreInputError(
                f"{place}: field question_id: {question_id!r} already on line {seen[question_id]}"
            )
        seen[question_id] = number
        hypothesis = text_field(item, "hypothesis", place)
        answers.append(Answer(question_id, hypothesis, f"line {number}"))
    if not answers:
        raise ScoreInputError(f"{path}: the answers file holds no answers")
    return AnswersFile(path, HYPOTHESES, file_sha256(path), answers)


HYPOTHESES_FORMAT = AnswersFormat(
    name=HYPOTHESES,
    words="a LongMemEval hypotheses file",
    recognises=lambda whole, first: not isinstance(whole, list),
    read=read_hypotheses,
    run_file="hypotheses.jsonl",
    fallback=True,  # any JSON-lines file no other format takes: its errors name the lines
)
