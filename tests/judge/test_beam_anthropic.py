"""A BEAM run judged by a model on Anthropic's Messages API: rubric items as one user message,
event ordering's equivalence questions with their system text in `system`, BEAM's cap and
temperature 0; the loopback server refuses any body the real API refuses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.beam.judge_stage import BEAM_JUDGE_MAX_TOKENS
from lme_bench.config.settings import load_settings
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.stage import judge_question
from lme_bench.results.qa_tables import HypothesisRow
from tests.benchmarks.beam.samples import write_chat, write_checkout, write_questions
from tests.providers.fake_anthropic_server import API_KEY, serve_anthropic

CLAUDE = "claude-sonnet-4-5"


def test_beam_questions_are_judged_over_the_messages_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    write_chat(tmp_path)
    write_questions(tmp_path)
    chats = tmp_path / "chats"
    refs = prepare_dataset(chats, tmp_path / "cache", *splitter_for(None, chats)).questions
    asked = [
        next(r for r in refs if r.question_type == t)
        for t in ("event_ordering", "information_extraction")
    ]
    with serve_anthropic([{"content": '{"score": 1, "reason": "covered"}'}]) as (url, fake):
        settings = load_settings(
            None,
            **{
                "run.results_dir": str(tmp_path / "results"),
                "dataset.path": str(chats),
                "models.judge": f"claude:{CLAUDE}",
                "models.retry_attempts": 1,
                "providers.claude": {"kind": "anthropic", "base_url": url},
                "judge.beam_repo": str(write_checkout(tmp_path)),
            },
        )
        rows = [
            asyncio.run(
                judge_question(
                    r,
                    HypothesisRow(
                        r.question_id,
                        r.question_type,
                        False,
                        "First a, then b.",
                        "single",
                        "q",
                        "v",
                        5,
                        0,
                    ),
                    judge_panel(settings),
                )
            )
            for r in asked
        ]
    assert [(row.judge, row.status) for found in rows for row in found] == [
        (f"claude:{CLAUDE}", "ok")
    ] * 2
    assert all(row.score is not None for found in rows for row in found)
    assert {b["model"] for b in fake.bodies} == {CLAUDE}
    assert {(b["max_tokens"], b["temperature"]) for b in fake.bodies} == {
        (BEAM_JUDGE_MAX_TOKENS, 0.0)
    }
    with_system = [b for b in fake.bodies if "system" in b]
    assert with_system, "event ordering asks its equivalence questions with a system text"
    assert all([m["role"] for m in b["messages"]] == ["user"] for b in fake.bodies)
    assert all(h["x-api-key"] == API_KEY for h in fake.headers)
