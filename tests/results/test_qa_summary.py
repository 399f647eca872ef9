"""The QA summary by the official rule: unreadable replies count wrong, each question is judged
once (repeat 0), readable-only figures apart, and questions without a verdict named."""

from __future__ import annotations

from lme_bench.judge.verdict import read_verdict
from lme_bench.report.qa import qa_markdown
from lme_bench.results.qa_scores import eval_results_name, qa_summary
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

JUDGE = "openai:gpt-4o-2024-08-06"


def _score(qid: str, qtype: str, reply: str | None, repeat: int = 0) -> ScoreRow:
    failed = reply is None
    verdict = read_verdict(reply)
    return ScoreRow(
        question_id=qid,
        question_type=qtype,
        is_abstention="_abs" in qid,
        judge=JUDGE,
        judge_kind="llm",
        repeat=repeat,
        prompt_version="lme-bench-judge-v2",
        prompt_name=qtype,
        prompt_sha256="a" * 64,
        label=None if failed else verdict.label,
        readable=None if failed else verdict.readable,
        raw_verdict=reply or "",
        status="error" if failed else "ok",
        attribution="",
    )


def _hypothesis(qid: str, qtype: str, status: str = "ok") -> HypothesisRow:
    return HypothesisRow(
        qid, qtype, "_abs" in qid, "x", "single", "fake:x", "v1", 10, 3, status=status
    )


def test_official_rule_readable_only_and_missing_questions() -> None:
    types = {
        "t1": "temporal-reasoning",
        "t2": "temporal-reasoning",
        "t3_abs": "temporal-reasoning",
        "k1": "knowledge-update",
        "k2": "knowledge-update",
        "k3": "knowledge-update",
        "m1": "multi-session",
    }
    scores = [
        _score("t1", types["t1"], "yes"),
        _score("t1", types["t1"], "no", repeat=1),  # later repeats never change the label
        _score("t2", types["t2"], "I can't grade this"),  # no yes/no: wrong by the official rule
        _score("t3_abs", types["t3_abs"], "Yes."),
        _score("k1", types["k1"], "no"),
        _score("k2", types["k2"], None),  # the judge call failed: no verdict
        _score("k3", types["k3"], ""),  # empty reply: wrong
    ]
    hypotheses = [_hypothesis(q, t, "error" if q == "m1" else "ok") for q, t in types.items()]
    judge = qa_summary(scores, hypotheses, types)["judges"][JUDGE]
    assert judge["per_type"]["temporal-reasoning"] == {
        "accuracy": 2 / 3,
        "correct": 2,
        "n": 3,
        "ci95": judge["per_type"]["temporal-reasoning"]["ci95"],
    }
    assert (
        judge["per_type"]["knowledge-update"]["correct"],
        judge["per_type"]["knowledge-update"]["n"],
    ) == (0, 2)
    assert (judge["overall"]["correct"], judge["overall"]["n"]) == (2, 5)
    assert judge["task_averaged"]["accuracy"] == (2 / 3 + 0) / 2
    assert (judge["abstention"]["correct"], judge["abstention"]["n"]) == (1, 1)
    assert judge["not_judged"] == 2 and judge["not_judged_ids"] == ["k2", "m1"]
    assert judge["unreadable"] == 2
    readable = judge["readable_only"]
    assert (readable["overall"]["correct"], readable["overall"]["n"]) == (2, 3)
    assert judge["types_judged"] == 2
    markdown = qa_markdown(qa_summary(scores, hypotheses, types))
    assert "**Incomplete**: 2 question(s) have no verdict" in markdown and "k2, m1" in markdown
    assert "task-averaged (2 of 6 types)" in markdown
    assert "Over readable verdicts only (left out: the 2 replies holding no yes or no" in markdown


def test_eval_results_file_names_follow_the_official_script() -> None:
    assert eval_results_name(JUDGE) == "hypotheses.jsonl.eval-results-gpt-4o"
    assert eval_results_name("openai:gpt-4o-mini-2024-07-18").endswith("-gpt-4o-mini")
    assert eval_results_name("local:my/judge").endswith("-my_judge")
