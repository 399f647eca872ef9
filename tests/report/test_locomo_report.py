"""A LoCoMo run's own figures: official token F1 per category from the answers and the gold,
evidence recall from the turn ranking, and the answers exported in the official format."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.benchmarks.split import splitter_for
from lme_bench.dataset.shards import QuestionRef, prepare_dataset
from lme_bench.report.locomo import PREDICTIONS_NAME, locomo_report
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.retrieval.official_ids import RetrievalRow
from tests.benchmarks.locomo.samples import listed_sample, write_json

ANSWERS = {  # the sample's questions, by category: right, right, half right, wrong, abstains
    "conv-7-q0": "violin, clarinet",
    "conv-7-q1": "2023",
    "conv-7-q2": "likely no, she has a dog",  # gold cut at ";": "Likely no"
    "conv-7-q3": "a cat",
    "conv-7-q4": "That is not mentioned in the conversation.",
}


def _refs(tmp_path: Path) -> list[QuestionRef]:
    path = write_json(tmp_path / "data.json", [listed_sample("conv-7")])
    return prepare_dataset(path, tmp_path / "cache", *splitter_for(None, path)).questions


def _answer(ref: QuestionRef) -> HypothesisRow:
    return HypothesisRow(
        ref.question_id, ref.question_type, ref.is_abstention, ANSWERS[ref.question_id],
        "single", "fake:x", "v1", 5, 0,
    )  # fmt: skip


def _turns(ref: QuestionRef, ranked: list[str]) -> RetrievalRow:
    return RetrievalRow(ref.question_id, ref.question_type, ref.is_abstention, "turn", ranked)


def test_official_f1_per_category_and_evidence_recall(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    # evidence of q0 is D2:2 (s001, turn 1), of q1 D2:1 (s001, turn 0)
    ranking = {"conv-7-q0": ["answer_s001_2", "s000_1"], "conv-7-q1": ["s000_1"]}
    rows = [_turns(r, ranking.get(r.question_id, [])) for r in refs]
    figures, section = locomo_report(tmp_path, refs, rows, [_answer(r) for r in refs], 10)
    categories = figures["categories"]
    assert categories["multi-hop"]["f1"] == 1.0
    assert categories["temporal"]["f1"] == 1.0
    assert 0.0 < categories["open-domain"]["f1"] < 1.0
    assert categories["single-hop"]["f1"] == 0.0
    assert categories["adversarial"]["f1"] == 1.0
    assert categories["multi-hop"]["evidence_recall"] == 1.0
    assert categories["temporal"]["evidence_recall"] == 0.0
    assert "## LoCoMo" in section and "| overall | 5 |" in section


def test_the_predictions_file_is_in_the_official_format(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    figures, _ = locomo_report(tmp_path, refs, [], [_answer(r) for r in refs], 10)
    exported = json.loads((tmp_path / PREDICTIONS_NAME).read_text())
    assert figures["predictions"] == PREDICTIONS_NAME
    assert [s["sample_id"] for s in exported] == ["conv-7"]
    first = exported[0]["qa"][0]
    assert first["question"] == "What instruments does Ben play?"
    assert first["prediction"] == "violin, clarinet" and first["category"] == 1
    assert figures["evidence_recall"] is None  # no ranking was given


def test_retrieval_only_runs_give_recall_without_f1(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    rows = [_turns(r, ["s000_1", "answer_s001_2"]) for r in refs]
    figures, section = locomo_report(tmp_path, refs, rows, None, 10)
    assert figures["overall_f1"] is None and figures["evidence_recall"] is not None
    assert not (tmp_path / PREDICTIONS_NAME).exists()
    assert "| overall | 5 | - |" in section


def test_evidence_recall_counts_the_first_turns_only(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    rows = [_turns(r, ["s000_1", "answer_s001_2"]) for r in refs]
    figures, _ = locomo_report(tmp_path, refs, rows, None, 1)
    assert figures["categories"]["multi-hop"]["evidence_recall"] == 0.0  # D2:2 is second
    assert figures["evidence_depth"] == 1
