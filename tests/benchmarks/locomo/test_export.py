from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lme_bench.builtin_benchmarks.locomo.export import (
    Prediction,
    official_qa_items,
    write_conversation_predictions,
    write_predictions,
)
from lme_bench.builtin_benchmarks.locomo.reader import load_samples
from lme_bench.builtin_benchmarks.locomo.records import Sample
from tests.benchmarks.locomo.samples import listed_sample, write_json


def _sample(tmp_path: Path, sample_id: str = "conv-7") -> Sample:
    (sample,) = load_samples(
        write_json(tmp_path / f"{sample_id}.in.json", [listed_sample(sample_id)])
    )
    return sample


def _predictions(sample: Sample) -> dict[str, Prediction]:
    return {
        q.question_id: Prediction(f"answer {q.index}", ["D1:1"] if q.index % 2 else None)
        for q in sample.questions
    }


def test_qa_items_hold_gold_prediction_and_context_under_the_key(tmp_path: Path) -> None:
    sample = _sample(tmp_path)
    items = official_qa_items(sample, _predictions(sample), key="mine_prediction")
    assert [item["category"] for item in items] == [1, 2, 3, 4, 5]
    assert items[0] == {
        "question": "What instruments does Ben play?",
        "answer": "violin, clarinet",
        "evidence": ["D2:2"],
        "category": 1,
        "mine_prediction": "answer 0",
    }
    assert items[1]["mine_prediction_context"] == ["D1:1"] and items[1]["answer"] == "2023"
    # category 5 without an answer: its adversarial answer, which the official code needs to read
    assert items[4]["answer"] == "Pip" and items[4]["adversarial_answer"] == "Pip"


def test_writes_one_conversation_and_a_list_atomically(tmp_path: Path) -> None:
    first, second = _sample(tmp_path, "conv-7"), _sample(tmp_path, "conv-8")
    predictions = {**_predictions(first), **_predictions(second)}
    out = tmp_path / "out" / "7.json"
    out.parent.mkdir()
    out.write_text("old")
    write_conversation_predictions(out, first, predictions)
    written = json.loads(out.read_text())
    assert written["sample_id"] == "conv-7"
    assert [item["prediction"] for item in written["qa"]] == [f"answer {i}" for i in range(5)]
    listed = tmp_path / "out" / "all.json"
    write_predictions(listed, [first, second], predictions)
    assert [s["sample_id"] for s in json.loads(listed.read_text())] == ["conv-7", "conv-8"]
    assert sorted(os.listdir(out.parent)) == ["7.json", "all.json"]  # no temporary file left


def test_a_missing_prediction_is_refused_and_the_old_file_stays(tmp_path: Path) -> None:
    sample = _sample(tmp_path)
    predictions = _predictions(sample)
    del predictions["conv-7-q3"]
    out = tmp_path / "7.json"
    out.write_text("old")
    with pytest.raises(ValueError, match="no prediction for question conv-7-q3"):
        write_conversation_predictions(out, sample, predictions)
    assert out.read_text() == "old"
