"""A judge that replies with nothing, garbage or a refusal for some questions: those questions
get judge-error rows, accuracy is computed over the others, and the run exits 1 with every
result written and a message naming them."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from lme_bench.judge.prompts import load_prompt_set
from lme_bench.judge.verdict import read_verdict
from lme_bench.pipeline import bundled_sample
from lme_bench.providers.fake_policies import (
    UNREADABLE_VERDICTS,
    match_judge,
    unreadable_verdict,
    unreliable_judge,
)
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
def test_unreliable_judge_misbehaves_on_three_questions_in_ten(digit: int) -> None:
    question = _question_with_crc_ending(digit)
    prompt = load_prompt_set().for_question("q1", "single-session-user")
    messages: list[BaseMessage] = [
        HumanMessage(prompt.render(question, "Lisbon", "You went to Lisbon."))
    ]
    reply = str(unreliable_judge(messages).content)
    if digit < len(UNREADABLE_VERDICTS):
        assert reply == UNREADABLE_VERDICTS[digit] == unreadable_verdict(question)
        assert read_verdict(reply).status == "judge-error"
    else:
        assert unreadable_verdict(question) is None
        assert reply == match_judge(messages).content == "yes"


@pytest.mark.slow
def test_judge_errors_are_rows_apart_and_accuracy_leaves_them_out(
    tmp_path: Path, run_env: RunEnv
) -> None:
    config = tmp_path / "bad-judge.toml"
    config.write_text(CONFIG)
    ended = finish(start_run(config, tmp_path, RUN_ID, run_env(), "--limit", str(QUESTIONS)))

    sample = json.loads(bundled_sample().read_text())[:QUESTIONS]
    unreadable = {q["question_id"]: unreadable_verdict(q["question"]) for q in sample}
    errors = sorted(q for q, reply in unreadable.items() if reply is not None)
    assert set(UNREADABLE_VERDICTS) == {r for r in unreadable.values() if r is not None}

    assert ended.code == 1, ended.tail()
    message = f"lme-bench: {len(errors)} question(s) failed: {', '.join(errors)}; results written"
    assert message in ended.out

    run_dir = tmp_path / RUN_ID
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    llm = {r["question_id"]: r for r in scores if r["judge"] == JUDGE}
    assert len(llm) == QUESTIONS
    for question_id, row in llm.items():
        if question_id in errors:
            assert (row["status"], row["label"], row["attribution"]) == (
                "judge-error",
                None,
                "judge-error",
            )
            assert row["raw_verdict"] == unreadable[question_id]
            assert f"judge {JUDGE} gave no yes/no verdict" in row["error"]
        else:
            assert row["status"] == "ok" and row["label"] is not None, row
    hypotheses = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == QUESTIONS and all(h["status"] == "ok" for h in hypotheses)
    found, duplicates = memories(tmp_path / "memory.sqlite")  # the judge never touches them
    assert len(found) == QUESTIONS and all(m["entries"] for m in found.values())
    assert duplicates == []

    judged = [r for r in llm.values() if r["status"] == "ok"]
    correct = sum(r["label"] for r in judged)
    summary = json.loads((run_dir / "summary.json").read_text())["qa"]["judges"][JUDGE]
    assert summary["judge_errors"] == len(errors)
    assert summary["overall"]["n"] == QUESTIONS - len(errors) == len(judged)
    assert summary["overall"]["correct"] == correct
    assert summary["overall"]["accuracy"] == pytest.approx(correct / len(judged))
    assert sum(t["n"] for t in summary["per_type"].values()) == len(judged)
    markdown = (run_dir / "summary.md").read_text()
    assert f"Judge errors (not counted as wrong): {len(errors)}." in markdown

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == errors
    assert all(f"judge {JUDGE} gave no yes/no verdict" in manifest["errors"][q] for q in errors)
    exported = (run_dir / "hypotheses.jsonl.eval-results-unreliable-judge").read_text()
    assert len(exported.splitlines()) == len(judged)  # the official export holds judged ones
