"""Prefect tasks of the benchmark: each one calls one core function (lme_bench.run.steps).

Per-question tasks persist their results under cache keys from lme_bench.run.cache_keys, so a
rerun of a run (or `prefect flow-run retry`) redoes only what failed or changed. A stage that
ends with failure rows raises StageFailed: the task fails, is not cached, and the flow still
gets the rows from the exception.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from datetime import datetime
from typing import Any, TypeVar

from lme_bench_tasks.result_cache import StageCache, lock_the_result_cache, stage_key
from lme_bench_tasks.storage import result_storage
from prefect import Task, get_run_logger, task
from prefect.cache_policies import NO_CACHE, CachePolicy
from prefect.client.schemas.objects import State, TaskRun
from prefect.context import TaskRunContext
from prefect.runtime import task_run
from prefect.utilities.annotations import BaseAnnotation

from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import PreparedDataset, QuestionRef
from lme_bench.ingest.question import MemoryLocation
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval.official_ids import RetrievalRow
from lme_bench.run import finish, steps
from lme_bench.run.batch import Batch, BatchFailed, BatchRunner, Outcome
from lme_bench.run.stage_table import PER_QUESTION, stage_spec
from lme_bench.run.transient import is_transient, retry_notice, scrubbed

T = TypeVar("T")
_log = logging.getLogger(__name__)


def _retry_transient(task: Task[Any, Any], run: TaskRun, state: State[Any]) -> bool:
    """Prefect asks only while retries are left, so a True here is a retry: said in one line
    at WARNING, as Prefect's own line is at INFO, hidden without -v."""
    # The state's result is the exception the task raised (read synchronously).
    error = state.result(raise_on_failure=False, _sync=True)  # type: ignore[call-overload]
    retry = isinstance(error, BaseException) and is_transient(error)
    if retry:
        attempts = (task.retries or 0) + 1
        _log.warning(retry_notice(run.name, run.run_count, attempts, error))
    return retry


def _given(value: Any) -> Any:
    """A parameter as given: the flow passes quote()d values (see flows/stage_runs.py)."""
    return value.unwrap() if isinstance(value, BaseAnnotation) else value


def _question_run_name(stage: str) -> Any:
    def name() -> str:
        ref = _given(task_run.parameters["ref"])
        return f"{stage} {ref.question_id} ({ref.question_type})"

    return name


def stage_cache(stage: str) -> CachePolicy:
    """The cache policy of a per-question stage."""

    def key(context: TaskRunContext, parameters: dict[str, Any]) -> str | None:
        ref = _given(parameters["ref"])
        upstream = _given(parameters[stage_spec(stage).given_as])
        settings, ingestion_id = _given(parameters["settings"]), parameters.get("ingestion_id")
        found: str | None = stage_key(
            stage, ref, settings, parameters["scope"], upstream, ingestion_id
        )
        return found

    return CachePolicy.from_cache_key_fn(key)


def per_question_tasks(settings: Settings) -> dict[str, Task[Any, Any]]:
    """Each stage's per-question task, its results persisted where the settings say (through
    the flow run's result cache, made thread-safe: lme_bench_tasks.result_cache)."""
    options: dict[str, Any] = {"persist_result": settings.cache.scope != "off"}
    if options["persist_result"]:
        options["result_storage"] = result_storage(settings)
        lock_the_result_cache()
    stage_tasks = (ingest_question, evaluate_question, answer_question, judge_question)
    found = {t.name: t for t in stage_tasks}
    return {stage: found[stage].with_options(**options) for stage in PER_QUESTION}


def _run(work: Coroutine[Any, Any, T], settings: Settings) -> T:
    """Run a core coroutine on this task's thread (sync tasks cost Prefect a third of what async
    ones do); an error whose text holds a secret is raised again with it masked, so the secret
    reaches no task state, log or persisted result."""
    try:
        return asyncio.run(work)
    except Exception as exc:
        clean = scrubbed(exc, settings)
        if clean is exc:
            raise
        raise clean from None


def _per_question(stage: str) -> dict[str, Any]:
    """Options of a per-question task: readable run names, cached results, and retries (with
    backoff and jitter) on transient faults only. No static tags: the flow adds them when
    `[run] task_tags` asks for them, as every tagged task run costs a server round trip."""
    return {
        "name": stage,
        "task_run_name": _question_run_name(stage),
        "cache_policy": stage_cache(stage),
        "retries": 2,
        "retry_delay_seconds": [2, 10],
        "retry_jitter_factor": 0.5,
        "retry_condition_fn": _retry_transient,
    }


@task(name="prepare-questions", cache_policy=NO_CACHE)
def prepare_questions(
    plan: steps.RunPlan, question_ids: list[str] | None, limit: int | None
) -> tuple[PreparedDataset, list[QuestionRef]]:
    return steps.prepare_questions(plan, question_ids, limit)


@task(
    name="locate-memories",
    cache_policy=NO_CACHE,
    retries=2,
    retry_delay_seconds=5,
    retry_condition_fn=_retry_transient,  # a backend that cannot start fails at once
)
def locate_memories(
    refs: list[QuestionRef], settings: Settings, scope: str, memory: steps.ConfiguredBackend
) -> dict[str, MemoryLocation]:
    build_ids = list(dict.fromkeys(r.build for r in refs))
    return asyncio.run(steps.locate_memories(build_ids, settings, scope, memory))


# `settings` are for the cache key; what the run derived once (its memory system as
# configured, its QA model and prompts, its judges) does the work.


@task(**_per_question("ingest"))
def ingest_question(
    ref: QuestionRef,
    settings: Settings,
    scope: str,
    location: MemoryLocation,
    memory: steps.ConfiguredBackend,
) -> steps.IngestOutcome:
    return _run(steps.ingest_question(ref, settings, scope, location, memory), settings)


@task(**_per_question("retrieval"))
def evaluate_question(
    ref: QuestionRef,
    outcome: steps.IngestOutcome,
    settings: Settings,
    scope: str,
    memory: steps.ConfiguredBackend,
) -> list[RetrievalRow]:
    return _run(steps.evaluate_question(ref, outcome, settings, memory), settings)


@task(**_per_question("answer"))
def answer_question(
    ref: QuestionRef,
    outcome: steps.IngestOutcome,
    settings: Settings,
    scope: str,
    qa: steps.QaPanel,
) -> HypothesisRow:
    row = _run(steps.answer_outcome(ref, outcome, qa), settings)
    return steps.require_ok(row)


@task(**_per_question("judge"))
def judge_question(
    ref: QuestionRef,
    hypothesis: HypothesisRow,
    settings: Settings,
    scope: str,
    ingestion_id: str,
    judges: steps.JudgePanel,
) -> list[ScoreRow]:
    rows = _run(steps.judge_question(ref, hypothesis, judges), settings)
    return steps.require_ok(rows)


@task(name="write-results", cache_policy=NO_CACHE)
def write_results(
    plan: steps.RunPlan,
    settings: Settings,
    prepared: PreparedDataset,
    refs: list[QuestionRef],
    results: finish.RunResults,
    started_at: datetime,
    publish: bool = True,
) -> finish.RunReport:
    return finish.write_run(plan, settings, prepared, refs, results, started_at, publish)


def _batch_run_name() -> str:
    batch: Batch = _given(task_run.parameters["batch"])
    ids = [ref.question_id for ref in batch.refs]
    if len(ids) == 1:
        return f"{batch.stage} 1 question ({ids[0]})"
    return f"{batch.stage} {len(ids)} questions ({ids[0]} … {ids[-1]})"


@task(
    name="question-batch",
    task_run_name=_batch_run_name,
    cache_policy=NO_CACHE,
    persist_result=False,
)
def question_batch(
    batch: Batch, runner: BatchRunner, per_question: Task[Any, Any]
) -> list[Outcome[Any]]:
    """A stage's batch of questions (lme_bench.run.batch), then each success persisted under
    the key `per_question`, the stage's own task, would use, so reruns and cache look-ups stay
    per question."""
    outcomes = runner.run(batch)
    kept = []
    for ref, upstream, outcome in zip(batch.refs, batch.upstreams, outcomes, strict=True):
        if outcome.error is None:
            key = stage_key(batch.stage, ref, batch.settings, batch.scope, upstream)
            kept.append((key, outcome.value))
        if outcome.attempts > 1:  # what a task of its own would show as its retries
            get_run_logger().warning(
                "%s %s: %d attempts", batch.stage, ref.question_id, outcome.attempts
            )
    StageCache(per_question).keep(kept)
    if any(o.error is not None for o in outcomes):
        raise BatchFailed(outcomes, [r.question_id for r in batch.refs])
    return outcomes
