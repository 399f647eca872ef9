"""Nothing a memory system or a reader model is given (builds, public questions) holds a gold
label: no question id, evidence id, `_abs`, `answer_` session id, category or answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lme_bench.benchmarks.protocol import PublicQuestion
from lme_bench.benchmarks.registry import load_benchmark
from tests.benchmarks.datasets import DATASETS


def _strings(value: Any) -> Iterator[str]:
    """Every string held by a record, walking dataclasses, tuples and lists."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield field.name
            yield from _strings(getattr(value, field.name))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def test_a_public_question_has_its_text_and_date_only() -> None:
    assert [f.name for f in dataclasses.fields(PublicQuestion)] == ["question", "question_date"]


@pytest.mark.parametrize("dataset", ["longmemeval", "locomo-list", "locomo-zip", "beam-checkout"])
def test_no_gold_label_reaches_the_public_records(dataset: str, tmp_path: Path) -> None:
    owner, write = DATASETS[dataset]
    path = write(tmp_path)
    benchmark = load_benchmark(owner)
    pairs = list(benchmark.questions(path))
    session_strings = [text for build in benchmark.builds(path) for text in _strings(build)]
    ids = {q.question_id for q, _ in pairs} | {i for _, g in pairs for i in g.evidence_ids}
    forbidden_ids = {i for i in ids if len(i) > 3} | {"_abs", "answer_", "has_answer"}
    for text in session_strings:  # the builds: ids, sessions, turns
        assert not [bad for bad in forbidden_ids if bad in text], text
    assert session_strings and ids  # something was checked
    if owner == "longmemeval":  # the sample has `_abs` questions and `answer_` evidence ids
        assert any(q.question_id.endswith("_abs") for q, _ in pairs)
        assert any(i.startswith("answer_") for i in ids)
    for question, gold in pairs:
        shown = list(_strings(question.public()))
        labels = forbidden_ids | {question.category} | {a for a in gold.answers if len(a) > 3}
        for text in shown:
            assert not [bad for bad in labels if bad in text], (text, labels)
