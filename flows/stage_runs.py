"""The per-question stage jobs as Prefect task runs: what the scheduler (lme_bench.run.scheduler)
is handed to submit jobs, to look their results up in the cache and to read their outcomes."""

from __future__ import annotations

import concurrent.futures
import contextvars
from typing import Any, TypeVar, cast

from lme_bench_tasks import benchmark as tasks
from lme_bench_tasks.result_cache import StageCache, stage_key
from prefect import Task, tags
from prefect.futures import PrefectFuture
from prefect.utilities.annotations import quote

from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.run import batch, builds
from lme_bench.run.batch import BatchFailed, Outcome
from lme_bench.run.collect import Done, IngestJob, Job, RunCollector
from lme_bench.run.scheduler import Running
from lme_bench.run.stage_table import STAGE_TABLE, stage_spec

T = TypeVar("T")
LOOKUPS_AT_ONCE = 16  # cache look-ups in flight: a bucket answers each in ~10-15 ms


def as_is(value: T) -> T:
    """A task argument Prefect passes on without walking it for futures (slow for big ones)."""
    return cast(T, quote(value))


def _wrapped(future: PrefectFuture[Any]) -> concurrent.futures.Future[Any]:
    wrapped = getattr(future, "wrapped_future", None)
    if not isinstance(wrapped, concurrent.futures.Future):
        raise TypeError("the flow needs a thread-pool task runner (concurrent futures)")
    return wrapped


def outcomes(jobs: list[Job], future: PrefectFuture[Any], batched: bool) -> list[Done]:
    """Each job's result: a task's own, or its question's in a batch task's outcomes."""
    try:
        future.wait()  # takes the final state from the finished thread (no API read)
    except Exception as exc:  # the task engine itself failed (e.g. the server answered 503)
        return [Done(job, None, exc) for job in jobs]
    state = future.state
    value = future.result(raise_on_failure=False)
    if not batched:
        (job,) = jobs
        if state.is_completed():  # "Cached": Prefect's cache held an earlier run's result
            return [Done(job, value, None, from_cache=getattr(state, "name", "") == "Cached")]
        return [Done(job, None, value or state.message or state.name)]
    found: list[Outcome[Any]] | None = None
    if state.is_completed():
        found = value
    elif isinstance(value, BatchFailed):
        found = cast(list[Outcome[Any]], value.outcomes)
    if found is None:  # the batch failed as a whole
        return [Done(job, None, value or state.message or state.name) for job in jobs]
    return [Done(job, o.value, o.error) for job, o in zip(jobs, found, strict=True)]


def _memory_gone(job: Job) -> bool:
    """An ingestion whose memory is gone or empty: ingested again, never from the cache."""
    return isinstance(job, IngestJob) and job.location.entries == 0


class StageRuns:
    """Submits a run's jobs as task runs of their stages' tasks (`by_stage`), a batch of a
    stage in `batch_sizes` as one `question-batch` task run on `runner`."""

    def __init__(
        self,
        refs: list[QuestionRef],
        settings: Settings,
        scope: str,
        collector: RunCollector,
        by_stage: dict[str, Task[Any, Any]],
        batch_sizes: dict[str, int],
        runner: batch.BatchRunner,
        handed: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.refs, self.settings, self.scope = refs, settings, scope
        self.collector, self.by_stage, self.batch_sizes = collector, by_stage, batch_sizes
        self.runner = runner
        # what the run derived once for a stage's tasks (its memory system as configured, the
        # QA panel, the judges), by the task's parameter
        self.handed = {stage: dict(given) for stage, given in (handed or {}).items()}
        self.caches = {stage: StageCache(task) for stage, task in by_stage.items()}
        # made once: each with_options() has Prefect read the function's source again
        self.reingest = by_stage["ingest"].with_options(refresh_cache=True)

    def _ingestion_id(self, job: Job) -> str | None:
        if not stage_spec(job.stage).takes_ingestion:
            return None
        return self.collector.ingestion_id(job.index)

    def lookup(self, job: Job) -> tuple[bool, Any]:
        """The job's result when the cache holds it (no task run). An ingestion whose memory
        this machine lacks is taken from the cache only when its build is in the build store
        (a worker sharing no disk with the one that ingested it fetches it when it searches)
        or, for results at a URL whose builds do not travel (a raw ingestion's), when no stage
        that searches the memory must run. With local results a memory gone is filled again."""
        ref, settings, scope = self.refs[job.index], self.settings, self.scope
        travels = builds.build_store(settings) is not None
        if _memory_gone(job) and not travels and settings.run.results_url is None:
            return False, None
        key = stage_key(job.stage, ref, settings, scope, job.upstream, self._ingestion_id(job))
        found: tuple[bool, Any] = self.caches[job.stage].lookup(key)
        if not (found[0] and _memory_gone(job)):
            return found
        if travels:
            return found if builds.build_available(found[1], settings) else (False, None)
        return (False, None) if self._searched_again(job.index, found[1]) else found

    def _searched_again(self, lead: int, outcome: Any) -> bool:
        """Whether a stage that searches the build's memory (given the ingestion: retrieval,
        answer) has no result in the cache for a question asking the build."""
        searching = [
            spec.name
            for spec in STAGE_TABLE
            if spec.upstream == "ingest" and spec.name in self.settings.stages
        ]
        build = self.refs[lead].build
        asking = [ref for ref in self.refs if ref.build == build]
        return any(
            not self.caches[stage].lookup(
                stage_key(stage, ref, self.settings, self.scope, outcome, None)
            )[0]
            for ref in asking
            for stage in searching
        )

    def lookup_many(self, jobs: list[Job]) -> list[tuple[bool, Any]]:
        """`lookup` of each job, LOOKUPS_AT_ONCE at a time (each in a copy of this thread's
        context, where Prefect keeps the flow run's result store)."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=LOOKUPS_AT_ONCE) as pool:
            found = [pool.submit(contextvars.copy_context().run, self.lookup, j) for j in jobs]
            return [future.result() for future in found]

    def submit(self, jobs: list[Job]) -> Running:
        batched = jobs[0].stage in self.batch_sizes
        future = self._submit_batch(jobs) if batched else self._submit_one(jobs[0])
        return Running(_wrapped(future), lambda: outcomes(jobs, future, batched))

    def _labels(self, job: Job) -> tuple[str, ...]:
        if not self.settings.run.task_tags:
            return ()
        return (job.stage, f"type:{self.refs[job.index].question_type}")

    def _submit_one(self, job: Job) -> PrefectFuture[Any]:
        ref = self.refs[job.index]
        task = self.reingest if _memory_gone(job) else self.by_stage[job.stage]
        arguments: dict[str, Any] = {stage_spec(job.stage).given_as: as_is(job.upstream)}
        arguments |= {name: as_is(value) for name, value in self.handed.get(job.stage, {}).items()}
        ingestion_id = self._ingestion_id(job)
        if ingestion_id is not None:
            arguments["ingestion_id"] = ingestion_id
        with tags(*self._labels(job)):
            future: PrefectFuture[Any] = task.submit(
                ref=as_is(ref), settings=as_is(self.settings), scope=self.scope, **arguments
            )
        return future

    def _submit_batch(self, jobs: list[Job]) -> PrefectFuture[Any]:
        stage = jobs[0].stage
        questions = batch.Batch(
            stage,
            [self.refs[job.index] for job in jobs],
            [job.upstream for job in jobs],
            self.settings,
            self.scope,
            self.handed.get(stage, {}).get("memory"),
        )
        with tags(*((stage,) if self.settings.run.task_tags else ())):
            future: PrefectFuture[Any] = tasks.question_batch.submit(
                batch=as_is(questions),
                runner=as_is(self.runner),
                per_question=as_is(self.by_stage[stage]),
            )
        return future
