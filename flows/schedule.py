"""Submitting per-question stage tasks with a limit per stage.

Mapping every stage at once would park waiting tasks on the task runner's threads; here a task
is submitted only once its input exists and its stage has a free slot, so a question's answer
starts as soon as its ingestion is done and no thread waits on another task. Later stages go
first, so questions finish (and show in the progress artifact) early.
"""

from __future__ import annotations

import concurrent.futures
from collections import deque
from collections.abc import Callable
from typing import Any

from prefect.futures import PrefectFuture

from lme_bench.run.collect import Done, Job

STAGE_ORDER = ("judge", "answer", "retrieval", "ingest")


def _wrapped(future: PrefectFuture[Any]) -> concurrent.futures.Future[Any]:
    wrapped = getattr(future, "wrapped_future", None)
    if not isinstance(wrapped, concurrent.futures.Future):
        raise TypeError("the flow needs a thread-pool task runner (concurrent futures)")
    return wrapped


def _outcome(job: Job, future: PrefectFuture[Any]) -> Done:
    try:
        future.wait()  # takes the final state from the finished thread (no API read)
    except Exception as exc:  # the task engine itself failed (e.g. the server answered 503)
        return Done(job, None, exc)
    state = future.state
    if state.is_completed():
        return Done(job, future.result(), None)
    return Done(job, None, future.result(raise_on_failure=False) or state.message or state.name)


def run_jobs(
    jobs: list[Job],
    limits: dict[str, int],
    submit: Callable[[Job], PrefectFuture[Any]],
    finished: Callable[[Done], list[Job]],
    reuse: Callable[[Job], Done | None] = lambda job: None,
) -> None:
    """Run `jobs` and every job `finished` returns for them, at most limits[stage] at once.
    A job whose result `reuse` finds (a cache hit) is finished without a task run."""
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
    running: dict[concurrent.futures.Future[Any], tuple[Job, PrefectFuture[Any]]] = {}
    in_flight = dict.fromkeys(STAGE_ORDER, 0)
    while running or any(queues.values()):
        for stage in STAGE_ORDER:
            while queues[stage] and in_flight[stage] < limits[stage]:
                job = queues[stage].popleft()
                future = submit(job)
                running[_wrapped(future)] = (job, future)
                in_flight[stage] += 1
        done, _ = concurrent.futures.wait(
            list(running), return_when=concurrent.futures.FIRST_COMPLETED
        )
        for key in done:
            job, future = running.pop(key)
            in_flight[job.stage] -= 1
            enqueue(finished(_outcome(job, future)))
