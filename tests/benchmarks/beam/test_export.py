"""The answers file BEAM's official evaluator reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.builtin_benchmarks.beam.export import (
    MissingAnswerError,
    official_answers,
    write_official_answers,
)
from lme_bench.builtin_benchmarks.beam.questions import read_probing_questions
from tests.benchmarks.beam.samples import QUESTIONS, write_questions


def test_answers_follow_the_official_order(tmp_path: Path) -> None:
    probing = read_probing_questions(write_questions(tmp_path))
    answers = {q.question_id: f"answer to {q.question}" for q in probing.questions}
    data = official_answers(probing, answers)
    assert list(data) == list(QUESTIONS)  # abilities in the official order
    for ability, items in QUESTIONS.items():
        assert [row["question"] for row in data[ability]] == [q["question"] for q in items]
        assert [row["llm_response"] for row in data[ability]] == [
            f"answer to {q['question']}" for q in items
        ]
    path = tmp_path / "out" / "answers.json"
    write_official_answers(path, probing, answers)
    assert json.loads(path.read_text(encoding="utf-8")) == data
    assert [p.name for p in path.parent.iterdir()] == ["answers.json"]  # no temporary left


def test_a_question_without_an_answer_is_named(tmp_path: Path) -> None:
    probing = read_probing_questions(write_questions(tmp_path))
    answers = {q.question_id: "x" for q in probing.questions}
    missing = next(q for q in probing.questions if q.question == "Where is my garden?")
    del answers[missing.question_id]
    with pytest.raises(MissingAnswerError, match=r"question information_extraction\[1\]"):
        official_answers(probing, answers)
