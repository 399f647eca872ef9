"""Submitting per-question stage tasks with a limit per stage.

Mapping every stage at once would park waiting tasks on the task runner's threads; here a task
is submitted only once its input exists and its stage has a free slot, so a question's answer
starts as soon as its ingestion is done and no thread waits on another task. Later stages go
first, so questions finish (and show in the progress artifact) early. A stage given a batch
size takes up to that many waiting questions into one task run (lme_bench.run.batch).
"""

from __future__ import annotations

import concurrent.futures
from collections import deque
from collections.abc import Callable
from typing import Any, cast

from prefect.futures import PrefectFuture

from lme_bench.run.batch import BatchFailed, Outcome
from lme_bench.run.collect import Done, Job

STAGE_ORDER = ("judge", "answer", "retrieval", "ingest")


def _wrapped(future: PrefectFuture[Any]) -> concurrent.futures.Future[Any]:
    wrapped = getattr(future, "wrapped_future", None)
    if not isinstance(wrapped, concurrent.futures.Future):
        raise TypeError("the flow needs a thread-pool task runner (concurrent futures)")
    return wrapped


def _outcomes(jobs: list[Job], future: PrefectFuture[Any], batched: bool) -> list[Done]:
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


def run_jobs(
    jobs: list[Job],
    limits: dict[str, int],
    submit: Callable[[list[Job]], PrefectFuture[Any]],
    finished: Callable[[Done], list[Job]],
    reuse: Callable[[Job], Done | None] = lambda job: None,
    batch_sizes: dict[str, int] | None = None,
    every_ingestion_started: Callable[[], None] = lambda: None,
    tick: Callable[[dict[str, int]], None] = lambda running: None,
    tick_s: float = 1.0,
) -> None:
    """Run `jobs` and every job `finished` returns for them, at most limits[stage] task runs
    at once. `submit` gets one job, or up to batch_sizes[stage] of a stage that has one (a
    batch task, returning a batch.Outcome per job). A job whose result `reuse` finds (a cache
    hit) is finished without a task run. `every_ingestion_started` is called once no
    ingestion waits (ingestions come only from `jobs`). `tick` gets the task runs in flight by
    stage once jobs are submitted and again every `tick_s` seconds while none finishes, so the
    progress shows from the first call on, not only when a whole stage of a question is done."""
    sizes = batch_sizes or {}
    queues: dict[str, deque[Job]] = {stage: deque() for stage in STAGE_ORDER}

    def enqueue(new: list[Job]) -> None:
        pending = list(reversed(new))
        while pending:
            job = pending.pop()
            found = reuse(job)
            if found is None:
                queues[job.stage].append(job)
            else:
                pending.extend(reversed(finished(found)))

    enqueue(jobs)
    running: dict[concurrent.futures.Future[Any], tuple[list[Job], PrefectFuture[Any]]] = {}
    in_flight = dict.fromkeys(STAGE_ORDER, 0)
    ingestions_waiting = True
    while running or any(queues.values()):
        for stage in STAGE_ORDER:
            queue = queues[stage]
            while queue and in_flight[stage] < limits[stage]:
                taken = [queue.popleft() for _ in range(min(sizes.get(stage, 1), len(queue)))]
                future = submit(taken)
                running[_wrapped(future)] = (taken, future)
                in_flight[stage] += 1
        if ingestions_waiting and not queues["ingest"]:
            ingestions_waiting = False
            every_ingestion_started()
        tick(dict(in_flight))
        done: set[concurrent.futures.Future[Any]] = set()
        while running and not done:
            done, _ = concurrent.futures.wait(
                list(running), timeout=tick_s, return_when=concurrent.futures.FIRST_COMPLETED
            )
            if not done:
                tick(dict(in_flight))
        for key in done:
            taken, future = running.pop(key)
            stage = taken[0].stage
            in_flight[stage] -= 1
            for outcome in _outcomes(taken, future, stage in sizes):
                enqueue(finished(outcome))
