"""A run folder as the reference of a calibration: the official judge's first verdicts with
the run's hypotheses; a run judged by another judge is one error naming the judges found."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lme_bench.judge.calibration.reference import CalibrationInputError, read_reference
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow, hypotheses_table, scores_table
from lme_bench.results.tables import write_parquet


def _score(qid: str, judge: str, label: bool | None, repeat: int = 0) -> ScoreRow:
    status = "ok" if label is not None else "error"
    return ScoreRow(qid, "multi-session", False, judge, "llm", repeat, "official", "multi-session",
                    "abc", label, True, "yes" if label else "no", status, "")  # fmt: skip


def _hypothesis(qid: str, text: str) -> HypothesisRow:
    return HypothesisRow(qid, "multi-session", False, text, "single", "fake:x", "v1", 10, 3)


def _run(run_dir: Path, judge: str) -> None:
    scores = [
        _score("q1", judge, True),
        _score("q1", judge, False, repeat=1),  # repeats are not the verdict
        _score("q2", judge, False),
        _score("q3", judge, None),  # the judge's call failed: no verdict to compare with
        _score("q1", "fallback:normalized-match", False),
    ]
    write_parquet(run_dir / "scores.parquet", scores_table("r", scores))
    hypotheses = [_hypothesis(q, f"answer {q}") for q in ("q1", "q2", "q3")]
    write_parquet(run_dir / "hypotheses.parquet", hypotheses_table("r", hypotheses))


def test_a_run_judged_by_the_official_judge_is_a_reference(tmp_path: Path) -> None:
    _run(tmp_path, "openai:gpt-4o-2024-08-06")
    reference = read_reference(tmp_path)
    assert reference.kind == "run" and reference.judge_model == "gpt-4o-2024-08-06"
    assert reference.prompt_version == "official"
    digest = hashlib.sha256((tmp_path / "scores.parquet").read_bytes()).hexdigest()
    assert reference.sha256 == digest
    found = [(v.question_id, v.hypothesis, v.label) for v in reference.verdicts]
    assert found == [("q1", "answer q1", True), ("q2", "answer q2", False)]


def test_a_run_judged_by_another_judge_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, "openai:gpt-5-mini")
    with pytest.raises(CalibrationInputError, match=r"no verdicts of the official judge .*"
                       r"judges found: fallback:normalized-match, openai:gpt-5-mini"):  # fmt: skip
        read_reference(tmp_path)
    (tmp_path / "hypotheses.parquet").unlink()
    with pytest.raises(CalibrationInputError, match=r"hypotheses\.parquet is missing"):
        read_reference(tmp_path)
