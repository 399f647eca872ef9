"""What a memory system or reader model sees of a LoCoMo question carries no gold label."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from lme_bench.builtin_benchmarks.locomo.reader import load_samples
from lme_bench.builtin_benchmarks.locomo.records import Gold, Question, QuestionView, public_view
from tests.benchmarks.locomo.samples import listed_sample, write_json

GOLD_FIELDS = {field.name for field in dataclasses.fields(Gold)}


def test_the_public_view_holds_text_conversation_and_date_only(tmp_path: Path) -> None:
    (sample,) = load_samples(write_json(tmp_path / "l.json", [listed_sample("conv-7")]))
    view_fields = {field.name for field in dataclasses.fields(QuestionView)}
    assert view_fields == {"conversation_id", "question", "question_date"}
    assert not view_fields & (GOLD_FIELDS | {"index", "answer", "evidence", "category"})
    for question, gold in zip(sample.questions, sample.gold, strict=True):
        view = public_view(question)
        assert (view.conversation_id, view.question) == ("conv-7", question.text)
        assert view.question_date is None
        shown = json.dumps(dataclasses.asdict(view), default=str)
        assert question.question_id not in shown
        for label in (gold.answer, gold.adversarial_answer, *gold.evidence):
            if label is not None:
                assert label not in shown, (label, shown)
        assert '"category"' not in shown


def test_questions_and_conversations_hold_no_gold_field() -> None:
    question_fields = {field.name for field in dataclasses.fields(Question)}
    assert question_fields & GOLD_FIELDS == {"question_id"}  # the key that joins them
    assert not {"answer", "adversarial_answer", "evidence", "category"} & question_fields
