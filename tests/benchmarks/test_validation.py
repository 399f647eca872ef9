"""`validate` raises one DatasetError naming the file, the item and the field, whichever the
benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.benchmarks.registry import load_benchmark
from lme_bench.dataset.errors import DatasetError
from tests.benchmarks.beam.samples import QUESTIONS, write_chat, write_questions
from tests.benchmarks.datasets import LONGMEMEVAL_SAMPLE
from tests.benchmarks.locomo.samples import listed_sample, write_json


def test_longmemeval(tmp_path: Path) -> None:
    questions = json.loads(LONGMEMEVAL_SAMPLE.read_text())[:2]
    questions[1]["question_type"] = "multi-hop"
    path = write_json(tmp_path / "lme.json", questions)
    with pytest.raises(DatasetError) as caught:
        load_benchmark("longmemeval").validate(path)
    assert str(caught.value).startswith(
        f"{path}: question #1 (question_id {questions[1]['question_id']!r}): field question_type:"
    )


def test_locomo(tmp_path: Path) -> None:
    broken = listed_sample("conv-8")
    broken["qa"][2]["category"] = 9
    path = write_json(tmp_path / "locomo.json", [listed_sample("conv-7"), broken])
    with pytest.raises(DatasetError) as caught:
        load_benchmark("locomo").validate(path)
    assert str(caught.value) == (
        f"{path}: sample 'conv-8': field qa[2].category: expected a category 1-5, got 9"
    )


def test_beam(tmp_path: Path) -> None:
    write_chat(tmp_path)
    broken = {**QUESTIONS, "abstention": [{"question": "", "rubric": ["x"]}]}
    path = write_questions(tmp_path, data=broken)
    with pytest.raises(DatasetError) as caught:
        load_benchmark("beam").validate(tmp_path)
    assert str(caught.value).startswith(
        f"{path}: chat 100K-3: question abstention[0]: field question:"
    )


def test_beam_without_chats(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no BEAM chat folder"):
        list(load_benchmark("beam").builds(tmp_path))
