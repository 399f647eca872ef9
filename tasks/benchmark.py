"""Prefect tasks of the benchmark: each one calls one core function (lme_bench.pipeline)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State, TaskRun
from prefect.runtime import task_run

from lme_bench import pipeline, report
from lme_bench.config import Settings
from lme_bench.dataset.shards import PreparedDataset, QuestionRef
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval import RetrievalRow
from lme_bench.transient import is_transient


def _retry_transient(task: Task[Any, Any], run: TaskRun, state: State[Any]) -> bool:
    # Called from inside the task engine's event loop: ask for the synchronous result.
    error = state.result(raise_on_failure=False, _sync=True)  # type: ignore[call-overload]
    return isinstance(error, BaseException) and is_transient(error)


def _question_run_name(stage: str) -> Any:
    def name() -> str:
        ref = task_run.parameters["ref"]
        return f"{stage} {ref.question_id} ({ref.question_type})"

    return name


def _per_question(stage: str) -> dict[str, Any]:
    """Options of a per-question task: readable run names, a stage tag, no result cache, and
    retries (with backoff and jitter) on transient faults only."""
    return {
        "tags": [stage],
        "task_run_name": _question_run_name(stage),
        "cache_policy": NO_CACHE,
        "retries": 2,
        "retry_delay_seconds": [2, 10],
        "retry_jitter_factor": 0.5,
        "retry_condition_fn": _retry_transient,
    }


@task(name="prepare-questions", cache_policy=NO_CACHE)
def prepare_questions(
    plan: pipeline.RunPlan, question_ids: list[str] | None, limit: int | None
) -> tuple[PreparedDataset, list[QuestionRef]]:
    return pipeline.prepare_questions(plan, question_ids, limit)


@task(name="ingest", **_per_question("ingest"))
async def ingest_question(
    ref: QuestionRef, settings: Settings, run_id: str
) -> pipeline.IngestOutcome:
    return await pipeline.ingest_question(ref, settings, run_id)


@task(name="evaluate-retrieval", **_per_question("retrieval"))
async def evaluate_question(
    ref: QuestionRef, outcome: pipeline.IngestOutcome, settings: Settings
) -> list[RetrievalRow]:
    return await pipeline.evaluate_question(ref, outcome, settings)


@task(name="answer", **_per_question("answer"))
async def answer_question(
    ref: QuestionRef, outcome: pipeline.IngestOutcome, settings: Settings
) -> HypothesisRow:
    return await pipeline.answer_question(ref, outcome.memory_id, settings)


@task(name="judge", **_per_question("judge"))
async def judge_question(
    ref: QuestionRef, hypothesis: HypothesisRow, settings: Settings
) -> list[ScoreRow]:
    return await pipeline.judge_question(ref, hypothesis, settings)


@task(name="write-results", cache_policy=NO_CACHE)
def write_results(
    plan: pipeline.RunPlan,
    settings: Settings,
    prepared: PreparedDataset,
    refs: list[QuestionRef],
    results: report.RunResults,
    started_at: datetime,
) -> report.RunReport:
    return report.write_run(plan, settings, prepared, refs, results, started_at)
