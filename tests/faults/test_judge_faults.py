"""A judge that replies with nothing, garbage or a refusal for some questions, and fails its call
for others: the unreadable replies count as wrong answers (the official rule) and are shown apart
in a readable-only figure; the failed calls leave their questions without a verdict, so the run
exits 1, names them, and says its figures are incomplete."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from lme_bench.judge.prompts import load_prompt_set
from lme_bench.judge.verdict import read_verdict
from lme_bench.providers.fake_policies import (
    UNREADABLE_VERDICTS,
    JudgeCallRefused,
    failed_judge_call,
    match_judge,
    unreadable_verdict,
    unreliable_judge,
)
from lme_bench.run.steps import bundled_sample
from tests.faults.runs import RunEnv, finish, memories, start_run

RUN_ID = "bad-judge"
QUESTIONS = 30
JUDGE = "fake:unreliable-judge"

CONFIG = """\
[ingest]
mode = "raw"

[models]
qa = "fake:quote-memory"
judge = "fake:unreliable-judge"
"""


def _question_with_crc_ending(digit: int) -> str:
    return next(
        text
        for n in range(1000)
        if zlib.crc32((text := f"Where did I go on trip {n}?").encode()) % 10 == digit
    )


@pytest.mark.parametrize("digit", range(5))
def test_unreliable_judge_misbehaves_on_four_questions_in_ten(digit: int) -> None:
    question = _question_with_crc_ending(digit)
    prompt = load_prompt_set().for_question("q1", "single-session-user")
    messages: list[BaseMessage] = [
        HumanMessage(prompt.render(question, "Lisbon", "You went to Lisbon."))
    ]
    if digit < len(UNREADABLE_VERDICTS):
        reply = str(unreliable_judge(messages).content)
        assert reply == UNREADABLE_VERDICTS[digit] == unreadable_verdict(question)
        assert read_verdict(reply).readable is False and read_verdict(reply).label is False
    elif failed_judge_call(question):
        with pytest.raises(JudgeCallRefused):
            unreliable_judge(messages)
    else:
        assert unreadable_verdict(question) is None
        assert str(unreliable_judge(messages).content) == match_judge(messages).content == "yes"


def _official_rescore(eval_results: Path, types: dict[str, str]) -> tuple[float, dict[str, int]]:
    """The official printer's arithmetic, done independently: overall accuracy, counts per type."""
    labels = [json.loads(line) for line in eval_results.read_text().splitlines()]
    per_type: dict[str, int] = {}
    for item in labels:
        assert item["autoeval_label"]["model"] == "unreliable-judge"
        per_type[types[item["question_id"]]] = per_type.get(types[item["question_id"]], 0) + 1
    return sum(bool(i["autoeval_label"]["label"]) for i in labels) / len(labels), per_type


@pytest.mark.slow
def test_unreadable_replies_count_wrong_and_failed_calls_leave_the_run_incomplete(
    tmp_path: Path, run_env: RunEnv
) -> None:
    config = tmp_path / "bad-judge.toml"
    config.write_text(CONFIG)
    ended = finish(start_run(config, tmp_path, RUN_ID, run_env(), "--limit", str(QUESTIONS)))

    sample = json.loads(bundled_sample().read_text())[:QUESTIONS]
    types = {q["question_id"]: q["question_type"] for q in sample}
    unreadable = {
        q["question_id"]: r for q in sample if (r := unreadable_verdict(q["question"])) is not None
    }
    failed = sorted(q["question_id"] for q in sample if failed_judge_call(q["question"]))
    assert set(UNREADABLE_VERDICTS) == set(unreadable.values()) and failed

    assert ended.code == 1, ended.tail()
    message = f"lme-bench: {len(failed)} question(s) failed: judge \N{MULTIPLICATION SIGN} "
    assert message in ended.out and f"; ids: {', '.join(failed)}; results written" in ended.out

    run_dir = tmp_path / RUN_ID
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    llm = {r["question_id"]: r for r in scores if r["judge"] == JUDGE}
    assert len(llm) == QUESTIONS
    for question_id, row in llm.items():
        if question_id in failed:
            assert (row["status"], row["label"], row["attribution"]) == (
                "error",
                None,
                "judge-failed",
            )
            assert "JudgeCallRefused" in row["error"]
        elif question_id in unreadable:
            assert (row["status"], row["label"], row["readable"]) == ("ok", False, False)
            assert row["raw_verdict"] == unreadable[question_id]
            assert row["attribution"] == "judge-unreadable"
        else:
            assert row["status"] == "ok" and row["readable"] is True, row
    hypotheses = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == QUESTIONS and all(h["status"] == "ok" for h in hypotheses)
    found, duplicates = memories(tmp_path / "memory.sqlite")  # the judge never touches them
    assert len(found) == QUESTIONS and all(m["entries"] for m in found.values())
    assert duplicates == []

    judged = [r for r in llm.values() if r["status"] == "ok"]
    correct = sum(r["label"] for r in judged)
    summary = json.loads((run_dir / "summary.json").read_text())["qa"]["judges"][JUDGE]
    assert summary["overall"]["n"] == QUESTIONS - len(failed) == len(judged)
    assert summary["overall"]["correct"] == correct
    assert summary["not_judged"] == len(failed) and summary["not_judged_ids"] == failed
    assert summary["unreadable"] == len(unreadable)
    readable = summary["readable_only"]["overall"]
    assert readable["n"] == len(judged) - len(unreadable) and readable["correct"] == correct
    markdown = (run_dir / "summary.md").read_text()
    assert f"**Incomplete run**: {len(failed)} of {QUESTIONS} questions failed" in markdown
    assert f"**Incomplete**: {len(failed)} question(s) have no verdict" in markdown
    assert all(q in markdown for q in failed)

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == failed
    exported = run_dir / "hypotheses.jsonl.eval-results-unreliable-judge"
    accuracy, per_type = _official_rescore(exported, types)
    assert accuracy == pytest.approx(summary["overall"]["accuracy"])
    assert per_type == {t: v["n"] for t, v in summary["per_type"].items()}
