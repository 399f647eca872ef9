"""A LoCoMo run's own figures: official token F1 per category from the answers and the gold,
evidence recall from the turn ranking, and the answers exported in the official format."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.locomo.report import PREDICTIONS_NAME, locomo_report
from lme_bench.dataset.shards import QuestionRef, prepare_dataset
from lme_bench.report.qa import qa_markdown
from lme_bench.results.qa_records import PromptSource
from lme_bench.results.qa_scores import qa_summary
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval.official_ids import RetrievalRow
from tests.benchmarks.locomo.samples import listed_sample, write_json

ANSWERS = {  # the sample's questions, by category: right, right, half right, wrong, abstains
    "conv-7-q0": "violin, clarinet",
    "conv-7-q1": "2023",
    "conv-7-q2": "likely no, she has a dog",  # gold cut at ";": "Likely no"
    "conv-7-q3": "a cat",
    "conv-7-q4": "That is not mentioned in the conversation.",
}


def _refs(tmp_path: Path, *samples: str) -> list[QuestionRef]:
    path = write_json(tmp_path / "data.json", [listed_sample(s) for s in samples or ["conv-7"]])
    return prepare_dataset(path, tmp_path / "cache", *splitter_for(None, path)).questions


def _answer(ref: QuestionRef, text: str | None = None) -> HypothesisRow:
    return HypothesisRow(
        ref.question_id, ref.question_type, ref.is_abstention,
        ANSWERS[ref.question_id] if text is None else text, "single", "fake:x", "v1", 5, 0,
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


def _verdict(ref: QuestionRef, judge: str, label: bool) -> ScoreRow:
    kind = "fallback" if judge.startswith("fallback:") else "llm"
    return ScoreRow(
        ref.question_id, ref.question_type, ref.is_abstention, judge, kind, 0, "v2",
        "default", "", label, True, "yes" if label else "no", "ok", "",
    )  # fmt: skip


def test_the_llm_judge_accuracy_stands_beside_f1_as_not_official(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    right = {"conv-7-q0", "conv-7-q1", "conv-7-q4"}
    scores = [
        *(_verdict(r, "lab:judge", r.question_id in right) for r in refs),
        *(_verdict(r, "fallback:normalized-match", True) for r in refs),  # never the one shown
    ]
    types = {r.question_id: r.question_type for r in refs}
    prompts: PromptSource = {"source": "lme-bench", "description": "ours", "script_sha256": None}
    qa = qa_summary(scores, [_answer(r) for r in refs], types, prompts)
    figures, section = locomo_report(tmp_path, refs, [], [_answer(r) for r in refs], 10, qa)
    judged = figures["llm_judge"]
    assert judged["label"] == "LLM judge, not the official LoCoMo metric"
    assert (judged["judge"], judged["prompt_source"]) == ("lab:judge", "lme-bench")
    assert (judged["overall"]["correct"], judged["overall"]["n"]) == (3, 5)
    assert [(c, row["correct"]) for c, row in judged["categories"].items()] == [
        ("multi-hop", 1),
        ("temporal", 1),
        ("open-domain", 0),
        ("single-hop", 0),
        ("adversarial", 1),
    ]
    assert judged["mapping"]["adversarial"]["prompt"] == "abstention"
    assert "| F1 (official) |" in section and "| LLM judge accuracy (not official) |" in section
    assert section.count("| 100.0% (1/1) |") == 3 and "| 60.0% (3/5) |" in section
    assert "LLM judge, not the official LoCoMo metric" in section


def test_without_an_llm_judge_the_column_is_empty_and_says_so(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    fallback_only = [_verdict(r, "fallback:normalized-match", True) for r in refs]
    types = {r.question_id: r.question_type for r in refs}
    qa = qa_summary(fallback_only, [_answer(r) for r in refs], types)
    figures, section = locomo_report(tmp_path, refs, [], [_answer(r) for r in refs], 10, qa)
    assert figures["llm_judge"] is None
    assert "No LLM judge gave verdicts" in section
    assert f"| overall | 5 | {figures['overall_f1']:.3f} | - | - |" in section


def test_each_conversation_gets_the_file_locomos_scorer_opens_and_the_list_stays(
    tmp_path: Path,
) -> None:
    """LoCoMo's task_eval scripts write one file per conversation (the input's name, its `qa`
    list with `<key>` per item) and eval_question_answering(file, key) reads that file's `qa`:
    each item's answer, category, evidence and prediction."""
    refs = _refs(tmp_path, "conv-7", "conv-8")
    answers = [_answer(r, f"answer to {r.question_id}") for r in refs]
    figures, section = locomo_report(tmp_path, refs, [], answers, 10)
    assert figures["conversation_predictions"] == ["locomo/7.json", "locomo/8.json"]
    listed = json.loads((tmp_path / PREDICTIONS_NAME).read_text())
    for sample_id, number in (("conv-7", 7), ("conv-8", 8)):
        opened = json.loads((tmp_path / "locomo" / f"{number}.json").read_text())
        assert opened == next(s for s in listed if s["sample_id"] == sample_id)
        assert [item["prediction"] for item in opened["qa"]] == [
            f"answer to {sample_id}-q{i}" for i in range(5)
        ]
        for item in opened["qa"]:
            assert isinstance(item["category"], int) and isinstance(item["evidence"], list)
            assert str(item["answer"])  # read for every category, the adversarial one too
    assert "`locomo/7.json` … `locomo/8.json`" in section


def test_adversarial_questions_are_the_accuracy_tables_abstention_row(tmp_path: Path) -> None:
    refs = _refs(tmp_path, "conv-7", "conv-8")
    right = {"conv-7-q4"}  # of the two adversarial questions (q4), one judged right
    scores = [_verdict(r, "lab:judge", r.question_id in right) for r in refs]
    types = {r.question_id: r.question_type for r in refs}
    abstaining = {r.question_id for r in refs if r.is_abstention}
    assert abstaining == {"conv-7-q4", "conv-8-q4"}
    qa = qa_summary(scores, [], types, abstention=abstaining)
    abstention = qa["judges"]["lab:judge"]["abstention"]
    assert (abstention["correct"], abstention["n"]) == (1, 2)
    assert qa["judges"]["lab:judge"]["per_type"]["adversarial"]["n"] == 2
    markdown = qa_markdown(qa, "locomo")
    assert "| abstention | 50.0% | 1 / 2 |" in markdown
    assert "six types" not in markdown and "`_abs`" not in markdown
    assert "adversarial (category 5) questions count in their category" in markdown
