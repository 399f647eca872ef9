"""`lme-bench estimate`: exact call counts from the pipeline's shape, prompt sizes from the real
prompt builders, prices and limits applied, and no model called (no key needed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lme_bench_flows.command import main

from lme_bench.config.settings import load_settings
from lme_bench.judge.panel import judge_panel
from lme_bench.run.estimate import calls_models, estimate_run
from lme_bench.run.steps import (
    answer_question,
    ingest_question,
    judge_question,
    plan_run,
    prepare_questions,
    qa_panel,
)


def test_agentic_calls_and_prompt_sizes_match_a_real_ingestion(tmp_path: Path) -> None:
    settings = load_settings(
        Path("configs/agentic-fake.toml"), **{"run.results_dir": str(tmp_path), "run.id": "est"}
    )
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=2)
    found = estimate_run([r.load() for r in refs], settings)
    (stage,) = found.stages
    outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    records = [s for o in outcomes for s in o.sessions]
    assert stage.calls == sum(r.llm_calls for r in records)  # one per message and session end
    spent = sum(r.input_tokens for r in records)
    assert abs(stage.input_tokens - spent) / spent < 0.1  # the prompts, up to the context stand-in


def test_answer_and_judge_calls_match_and_no_key_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path), "judge.repeats": 2, "qa.strategy": "two-pass"},
    )
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=3)
    answer, judge = estimate_run([r.load() for r in refs], settings).stages
    outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    hypotheses = [
        asyncio.run(answer_question(r, o.memory_id, qa_panel(settings)))
        for r, o in zip(refs, outcomes, strict=True)
    ]
    scores = [
        s
        for r, h in zip(refs, hypotheses, strict=True)
        for s in asyncio.run(judge_question(r, h, judge_panel(settings)))
    ]
    assert answer.calls == sum(h.llm_calls for h in hypotheses) == 6  # refine + reader
    assert judge.calls == sum(s.llm_calls for s in scores if s.judge_kind == "llm") == 6

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = tmp_path / "openai.toml"
    config.write_text(
        '[models]\nqa = "openai:gpt-4o-mini"\njudge = "openai:gpt-4o-2024-08-06"\n'
        '[prices."openai:gpt-4o-mini"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n'
        "[limits]\nanswer = 4\n"
    )
    openai = load_settings(config)
    assert calls_models(openai)
    answer, judge = estimate_run([r.load() for r in refs], openai, latency_s=3.0).stages
    assert answer.cost == pytest.approx(
        (answer.input_tokens * 0.15 + answer.output_tokens * 0.6) / 1e6
    )
    assert judge.cost is None  # no price: never counted as free
    assert answer.wall_s == pytest.approx(max(3 * 3.0 / 4, 3.0))


def test_the_command_prints_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LME_RUN__RESULTS_DIR", str(tmp_path))  # where the dataset split goes
    assert main(["estimate", "configs/agentic-fake.toml", "--limit", "2", "--latency", "1"]) == 0
    out = capsys.readouterr().out
    assert "Estimate for 2 questions at 1 s a call:" in out
    assert "| ingest | fake:note-taker |" in out and "Assumed:" in out
    assert not calls_models(load_settings(Path("configs/default.toml")))


def test_prompt_tokens_of_parts_equal_those_of_the_joined_text() -> None:
    from lme_bench.run.estimate import prompt_tokens, tokens

    cases = [
        ("system says", " hello", "world"),  # a word running across two parts counts once
        ("a\n", "b c", "", "d"),
        ("", "", ""),
        ("  ", "x", "\t"),
        ("tail", "\u3000head", "end\u00a0", "more"),  # Unicode spaces split words too
        ("one",),
    ]
    for parts in cases:
        for fake in (True, False):
            assert prompt_tokens(parts, fake) == tokens("".join(parts), fake), parts


def test_a_build_asked_by_several_questions_is_ingested_once(tmp_path: Path) -> None:
    settings = load_settings(
        Path("configs/agentic-fake.toml"), **{"run.results_dir": str(tmp_path), "run.id": "est"}
    )
    _, refs = prepare_questions(plan_run(settings), limit=3)
    instances = [r.load() for r in refs]
    one_each = estimate_run(instances, settings)
    first_only = estimate_run(instances[:1], settings).stages[0].calls
    shared = estimate_run(instances, settings, builds=["conv-1"] * 3)
    assert not one_each.shares_builds and one_each.builds == 3
    assert shared.shares_builds and shared.builds == 1 and shared.questions == 3
    assert shared.stages[0].calls == first_only < one_each.stages[0].calls


def test_locomo_questions_count_their_judge_calls(tmp_path: Path) -> None:
    from dataclasses import replace

    from lme_bench.qa.stage import unanswered_row
    from tests.benchmarks.locomo.samples import listed_sample, write_json

    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7")])
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path), "dataset.path": str(data), "judge.repeats": 2},
    )
    _, refs = prepare_questions(plan_run(settings), limit=None)
    answer, judge = estimate_run([r.load() for r in refs], settings).stages
    said = [replace(unanswered_row(r, settings), hypothesis="I don't know.") for r in refs]
    scores = [
        s
        for r, h in zip(refs, said, strict=True)
        for s in asyncio.run(judge_question(r, h, judge_panel(settings)))
    ]
    assert {r.benchmark for r in refs} == {"locomo"} and answer.calls == 5
    assert judge.calls == sum(s.llm_calls for s in scores if s.judge_kind == "llm") == 10
