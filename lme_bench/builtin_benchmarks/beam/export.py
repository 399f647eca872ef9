"""Answers in the shape BEAM's official evaluator reads, written atomically.

`src/evaluation/run_evaluation.py` reads an answers file holding, per ability, the list of
questions in the order of `probing_questions.json` (it finds each rubric there by that index),
each with its `question` and the system's `llm_response`; it writes `evaluation-<file>` beside
it. The official answer generator copies every field of the question into that file; only the
two the evaluator reads are written here.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.builtin_benchmarks.beam.models import ABILITIES, ProbingSet


class MissingAnswerError(ValueError):
    """A probing question without an answer; names the chat and the question."""


def official_answers(probing: ProbingSet, answers: Mapping[str, str]) -> dict[str, Any]:
    """`{ability: [{"question", "llm_response"}, …]}` in the official file's order; every
    question of the set needs an answer (by question id)."""
    text = {q.question_id: q.question for q in probing.questions}
    rows: dict[str, list[tuple[int, dict[str, str]]]] = {}
    for question_id, gold in probing.gold.items():
        if question_id not in answers:
            raise MissingAnswerError(
                f"chat {probing.conversation_id}: question {gold.ability}[{gold.index}]"
                f" ({question_id}): no answer"
            )
        item = {"question": text[question_id], "llm_response": answers[question_id]}
        rows.setdefault(gold.ability, []).append((gold.index, item))
    return {
        ability: [item for _, item in sorted(rows[ability], key=lambda pair: pair[0])]
        for ability in ABILITIES
        if ability in rows
    }


def write_official_answers(path: Path, probing: ProbingSet, answers: Mapping[str, str]) -> None:
    """Write the answers file (a temporary file in the same folder, then renamed)."""
    path = Path(path)
    data = json.dumps(official_answers(probing, answers), indent=4, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
