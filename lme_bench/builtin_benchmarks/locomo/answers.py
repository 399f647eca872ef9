"""LoCoMo predictions in the shape its official scorer reads (builtin_benchmarks.locomo.export):
a list of conversations (`locomo10.json`'s layout), or one, each `{"sample_id", "qa": [...]}`
with every question's prediction under one key: `prediction`, or `<model>_prediction` as the
official runs name it. A question is named by its conversation and its place in `qa`, as the
dataset names it (lme_bench.builtin_benchmarks.locomo.records.question_id)."""

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
from lme_bench.builtin_benchmarks.locomo.records import question_id
from lme_bench.dataset.shards import file_sha256

LOCOMO = "locomo-predictions"
PREDICTION = "prediction"


def is_locomo(value: Any) -> bool:
    """A parsed JSON document shaped as LoCoMo predictions (a conversation or a list of them)."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(i, dict) and "qa" in i for i in items)


def _is_prediction_key(key: str) -> bool:
    return key == PREDICTION or key.endswith("_" + PREDICTION)


def _prediction_key(path: Path, conversations: list[dict[str, Any]]) -> str:
    """The one key the file's predictions are under."""
    keys: list[str] = sorted(
        {
            str(key)
            for conversation in conversations
            for item in conversation.get("qa") or []
            if isinstance(item, dict)
            for key in item
            if _is_prediction_key(key)
        }
    )
    if not keys:
        raise ScoreInputError(
            f"{path}: no qa item holds a prediction (field {PREDICTION} or <model>_{PREDICTION})"
        )
    if len(keys) > 1:
        raise ScoreInputError(
            f"{path}: predictions under several keys ({', '.join(keys)}): keep one model's"
        )
    return keys[0]


def read_locomo(path: Path, text: str, value: Any) -> AnswersFile:
    """Every question's prediction; a conversation twice is an error naming both places."""
    conversations: list[dict[str, Any]] = value if isinstance(value, list) else [value]
    key = _prediction_key(path, conversations)
    answers: list[Answer] = []
    seen: dict[str, int] = {}
    for number, conversation in enumerate(conversations):
        where = f"{path}: conversation {number}"
        sample_id = conversation.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id:
            raise ScoreInputError(f"{where}: field sample_id: expected text, got {sample_id!r}")
        if sample_id in seen:
            raise ScoreInputError(
                f"{where}: field sample_id: {sample_id!r} already conversation {seen[sample_id]}"
            )
        seen[sample_id] = number
        items = conversation["qa"]
        if not isinstance(items, list):
            raise ScoreInputError(f"{where} ({sample_id}): field qa: expected a list")
        for index, item in enumerate(items):
            place = f"{path}: {sample_id} qa[{index}]"
            if not isinstance(item, dict):
                raise ScoreInputError(f"{place}: expected a JSON object")
            question = text_field(item, "question", place)
            prediction = text_field(item, key, place)
            answers.append(
                Answer(
                    question_id(sample_id, index), prediction, f"{sample_id} qa[{index}]", question
                )
            )
    if not answers:
        raise ScoreInputError(f"{path}: the answers file holds no answers")
    return AnswersFile(path, LOCOMO, file_sha256(path), answers)


PREDICTIONS = AnswersFormat(
    name=LOCOMO,
    words="LoCoMo predictions",
    recognises=lambda whole, first: is_locomo(whole),
    read=read_locomo,
    run_file="locomo_predictions.json",
)
