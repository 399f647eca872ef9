"""Predictions in the shape LoCoMo's official scorer reads, written atomically.

The official `eval_question_answering(..., eval_key)` reads a conversation's `qa` list, each
item holding the gold fields beside the prediction under `eval_key` (`prediction` by default;
its own runs use `<model>_prediction`) and, for evidence recall, the retrieved dialog ids under
`<eval_key>_context`. It reads `answer` for every category, so a category-5 item without one
gets its adversarial answer there (the category-5 rule never reads it): the official code
would stop on such an item otherwise.

`write_conversation_predictions` writes one conversation (`{"sample_id", "qa"}`, the file the
official function of the repository's first release opens); `write_predictions` writes a list
of them, the `locomo10.json` layout its later version iterates.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.builtin_benchmarks.locomo.records import Sample

DEFAULT_KEY = "prediction"


@dataclass(frozen=True, slots=True)
class Prediction:
    answer: str
    retrieved: Sequence[str] | None = None  # dialog ids (or `S<n>` session ids), best first


def official_qa_items(
    sample: Sample, predictions: Mapping[str, Prediction], key: str = DEFAULT_KEY
) -> list[dict[str, Any]]:
    """The sample's `qa` list with each question's prediction; every question needs one."""
    items = []
    for question, gold in zip(sample.questions, sample.gold, strict=True):
        prediction = predictions.get(question.question_id)
        if prediction is None:
            raise ValueError(f"no prediction for question {question.question_id}")
        item: dict[str, Any] = {
            "question": question.text,
            "answer": gold.answer if gold.answer is not None else (gold.adversarial_answer or ""),
            "evidence": list(gold.evidence),
            "category": gold.category,
        }
        if gold.adversarial_answer is not None:
            item["adversarial_answer"] = gold.adversarial_answer
        item[key] = prediction.answer
        if prediction.retrieved is not None:
            item[f"{key}_context"] = list(prediction.retrieved)
        items.append(item)
    return items


def _conversation(sample: Sample, predictions: Mapping[str, Prediction], key: str) -> Any:
    return {
        "sample_id": sample.conversation.conversation_id,
        "qa": official_qa_items(sample, predictions, key),
    }


def write_json_atomically(path: Path, value: Any) -> None:
    """Write JSON to a temporary file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, indent=2, ensure_ascii=False)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(0o644)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_conversation_predictions(
    path: Path, sample: Sample, predictions: Mapping[str, Prediction], key: str = DEFAULT_KEY
) -> None:
    write_json_atomically(Path(path), _conversation(sample, predictions, key))


def write_predictions(
    path: Path,
    samples: Iterable[Sample],
    predictions: Mapping[str, Prediction],
    key: str = DEFAULT_KEY,
) -> None:
    write_json_atomically(Path(path), [_conversation(s, predictions, key) for s in samples])
