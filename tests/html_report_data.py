"""A small run for the report.html tests: four questions, one answered right, one wrong (its
hypothesis is hostile HTML), one failed, one abstention question judged wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lme_bench.dataset.shards import QuestionRef, prepare_dataset
from lme_bench.report.html_report import write_html_report
from lme_bench.results.qa_scores import qa_summary
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.summary import summarize_retrieval
from lme_bench.retrieval.official_ids import RetrievalRow
from tests.factories import make_question

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>'
EVIDENCE_TURN = "answer_4be1b6b4_3"  # the factory's user turn with has_answer
FILLER_TURN = "sharegpt_Ab3dE9x_0_1"
JUDGE = "openai:gpt-4o-2024-08-06"

# question id -> (type, hypothesis, hypothesis status, judge label, attribution)
CASES: dict[str, tuple[str, str | None, str, bool | None, str]] = {
    "q-right": ("single-session-user", "a golden retriever", "ok", True, "correct"),
    "q-wrong": ("temporal-reasoning", HOSTILE, "ok", False, "retrieved-not-answered"),
    "q-failed": ("multi-session", None, "error", None, "answer-failed"),
    "q-none_abs": ("multi-session", "I think a poodle", "ok", False, "answered-wrong"),
}


def _hypothesis(qid: str) -> HypothesisRow:
    qtype, text, status, _, _ = CASES[qid]
    return HypothesisRow(
        qid, qtype, qid.endswith("_abs"), text, "single", "fake:quote-memory", "v1", 10, 0,
        evidence_in_context=text is not None, status=status,
        error="model call failed: 500" if status == "error" else None,
    )  # fmt: skip


def _score(qid: str) -> ScoreRow:
    qtype, _, status, label, attribution = CASES[qid]
    reply = "yes" if label else "no, it says " + (CASES[qid][1] or "")
    return ScoreRow(
        qid, qtype, qid.endswith("_abs"), JUDGE, "llm", 0, "official", "default", "sha",
        label, True, reply, "ok" if status == "ok" else "error", attribution,
    )  # fmt: skip


def write_sample_report(
    folder: Path, extend: Callable[[dict[str, Any]], None] | None = None
) -> tuple[Path, list[QuestionRef]]:
    """Write the dataset, then report.html for it; returns (the page, the questions).
    `extend` adds to the summary before the page is rendered."""
    data = folder / "data.json"
    questions = [make_question(q, question_type=t) for q, (t, *_) in CASES.items()]
    data.write_text(json.dumps(questions), encoding="utf-8")
    refs = prepare_dataset(data, folder / "cache").questions
    retrieval = [
        RetrievalRow(
            q, t, q.endswith("_abs"), g, ranked, {"recall_any@5": float(q == "q-right")}, 1
        )
        for q, (t, *_) in CASES.items()
        for g, ranked in (
            ("turn", [EVIDENCE_TURN, FILLER_TURN]),
            ("session", ["answer_4be1b6b4", "sharegpt_Ab3dE9x_0"]),
        )
    ]
    hypotheses = [_hypothesis(q) for q in CASES]
    scores = [_score(q) for q in CASES]
    types = {q: t for q, (t, *_) in CASES.items()}
    summary = summarize_retrieval(retrieval)
    summary["qa"] = qa_summary(scores, hypotheses, types)
    summary["incomplete"] = {"failed": 1, "question_ids": ["q-failed"]}
    summary["ingestion"] = {"questions": 4, "llm_calls": 0}
    summary["cost"] = {
        "ingestion": 0.0, "answering": 0.012, "judging": 0.004, "total": 0.016,
        "per_question": 0.004, "per_correct_answer": 0.016, "unpriced_models": [],
    }  # fmt: skip
    if extend is not None:
        extend(summary)
    run_dir = folder / "run"
    page = write_html_report(
        run_dir, "lme-bench run test", summary, refs, retrieval, hypotheses, scores,
        {"q-failed": "answer: model call failed: 500"},
    )  # fmt: skip
    return page, refs
