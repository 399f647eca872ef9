"""Every stage of a few sample questions in process, as the flow runs them, then the run's
files: for tests of what a run writes without Prefect."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import PreparedDataset
from lme_bench.judge.panel import judge_panel
from lme_bench.run.finish import RunReport, RunResults, write_run
from lme_bench.run.steps import (
    answer_question,
    evaluate_question,
    ingest_question,
    judge_question,
    plan_run,
    prepare_questions,
    qa_panel,
)


def run_every_stage(
    settings: Settings, limit: int, started: datetime | None = None
) -> tuple[RunReport, RunResults, PreparedDataset]:
    """`limit` questions through every stage `settings` runs, written as a run that started
    at `started` (now by default)."""
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan, limit=limit)
    results = RunResults()
    results.outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    pairs = list(zip(refs, results.outcomes, strict=True))
    results.retrieval = [
        row for r, o in pairs for row in asyncio.run(evaluate_question(r, o, settings))
    ]
    if "answer" in settings.stages:
        results.hypotheses = [
            asyncio.run(answer_question(r, o.memory_id, qa_panel(settings))) for r, o in pairs
        ]
        results.scores = [
            s
            for r, h in zip(refs, results.hypotheses, strict=True)
            for s in asyncio.run(judge_question(r, h, judge_panel(settings)))
        ]
    report = write_run(plan, settings, prepared, refs, results, started or datetime.now(UTC))
    return report, results, prepared
