"""A benchmark's own rule (its `score_answer` hook) gives the verdict: one row a question, no
model called though an LLM judge is configured, no calls in the estimate, and its source in
the judge's cache key (docs/example_benchmark.py's multiple-choice rule)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from lme_bench.benchmarks.split import splitter_for
from lme_bench.config.settings import load_settings
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.stage import judge_question
from lme_bench.qa.stage import unanswered_row
from lme_bench.run.cache_keys import stage_key
from lme_bench.run.estimate import estimate_run

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "benchmarks" / "data" / "pantry.choices.json"


def test_the_rule_scores_each_answer_and_no_model_is_called(tmp_path: Path) -> None:
    example = ROOT / "docs" / "example_benchmark.py"
    configured = f"{example}:Choices"
    refs = prepare_dataset(DATA, tmp_path / "split", *splitter_for(configured, DATA)).questions
    settings = load_settings(
        None,
        **{
            "dataset.benchmark": configured,
            "run.results_dir": str(tmp_path / "results"),
            "run.stages": ["judge"],
            "models.judge": "local:judge",  # no server: a call would fail
            "providers.local": {"base_url": "http://127.0.0.1:9"},
        },
    )
    responses = {"c1-q1": "(B)", "c1-q2": "Lisbon, I think"}
    rows = [
        asyncio.run(
            judge_question(
                r,
                replace(unanswered_row(r, settings), hypothesis=responses[r.question_id]),
                judge_panel(settings),
            )
        )
        for r in refs
    ]
    assert [[(s.judge, s.judge_kind, s.label, s.llm_calls) for s in found] for found in rows] == [
        [("rule:choices", "rule", True, 0)],
        [("rule:choices", "rule", False, 0)],  # Lisbon is (A); the gold is (B)
    ]
    estimate = estimate_run((r.load() for r in refs), settings)
    assert [(s.stage, s.calls) for s in estimate.stages if s.stage == "judge"] == [("judge", 0)]
    key = stage_key("judge", refs[0], settings, "run-1", unanswered_row(refs[0], settings))
    changed = tmp_path / "changed.py"
    changed.write_text(example.read_text().replace("== question.answer", "!= question.answer"))
    other = settings.model_copy(
        update={"dataset": settings.dataset.model_copy(update={"benchmark": f"{changed}:Choices"})}
    )
    assert key != stage_key("judge", refs[0], other, "run-1", unanswered_row(refs[0], settings))
