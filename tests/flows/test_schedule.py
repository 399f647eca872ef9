"""The flow's scheduler (flows/schedule.py) on futures of a plain thread pool: stage limits, and
the moment it says every ingestion has started."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from lme_bench_flows.schedule import run_jobs

from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.run.collect import Done, IngestJob, Job, RetrievalJob


class _Completed:
    @staticmethod
    def is_completed() -> bool:
        return True


_COMPLETED = _Completed()


class PoolFuture:
    """What the scheduler reads of a Prefect future: its wrapped future, state and result."""

    def __init__(self, wrapped: concurrent.futures.Future[Any]) -> None:
        self.wrapped_future = wrapped

    def wait(self) -> None:
        self.wrapped_future.result()

    @property
    def state(self) -> Any:
        return _COMPLETED

    def result(self, raise_on_failure: bool = True) -> Any:
        return self.wrapped_future.result()


def _ingest_job(index: int) -> IngestJob:
    return IngestJob(index, MemoryLocation(f"q{index}", f"m{index}", 0))


def test_every_ingestion_started_is_said_once_after_the_last_ingestion_is_submitted() -> None:
    questions, ingest_limit = 7, 3
    release = threading.Event()
    submitted: list[Job] = []
    in_flight = {"ingest": 0, "retrieval": 0}
    peak = dict(in_flight)
    lock = threading.Lock()
    said: list[int] = []  # ingestions submitted when it was said

    def work(job: Job) -> IngestOutcome:
        with lock:
            in_flight[job.stage] += 1
            peak[job.stage] = max(peak[job.stage], in_flight[job.stage])
        release.wait(5)
        with lock:
            in_flight[job.stage] -= 1
        return IngestOutcome(f"q{job.index}", f"m{job.index}", 1, 0.0)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:

        def submit(jobs: list[Job]) -> Any:
            (job,) = jobs
            submitted.append(job)
            if len([j for j in submitted if j.stage == "ingest"]) == ingest_limit:
                release.set()  # the first ones may finish once the limit is reached
            return PoolFuture(pool.submit(work, job))

        def finished(done: Done) -> list[Job]:
            if isinstance(done.job, IngestJob):
                assert isinstance(done.value, IngestOutcome)
                return [RetrievalJob(done.job.index, done.value)]
            return []

        def started_all() -> None:
            said.append(len([j for j in submitted if j.stage == "ingest"]))

        limits = {"ingest": ingest_limit, "retrieval": 2, "answer": 1, "judge": 1}
        jobs: list[Job] = [_ingest_job(i) for i in range(questions)]
        run_jobs(jobs, limits, submit, finished, every_ingestion_started=started_all)

    assert said == [questions]  # once, when the last ingestion went in
    assert [j.stage for j in submitted].count("retrieval") == questions
    assert peak["ingest"] <= ingest_limit and peak["retrieval"] <= 2


def test_the_heartbeat_ticks_while_the_first_jobs_run_and_before_any_finishes() -> None:
    release = threading.Event()
    ticks: list[dict[str, int]] = []
    finished_at_tick: list[int] = []
    finished_jobs: list[Job] = []

    def work(job: Job) -> IngestOutcome:
        assert release.wait(30), "the scheduler ticked while the job ran"
        return IngestOutcome(f"q{job.index}", f"m{job.index}", 1, 0.0)

    def tick(running: dict[str, int]) -> None:
        ticks.append(running)
        finished_at_tick.append(len(finished_jobs))
        if len(ticks) == 3:  # two heartbeats while the jobs still run: let them finish
            release.set()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        run_jobs(
            [_ingest_job(i) for i in range(2)],
            {"ingest": 2, "retrieval": 1, "answer": 1, "judge": 1},
            lambda jobs: PoolFuture(pool.submit(work, jobs[0])),
            lambda done: finished_jobs.append(done.job) or [],
            tick=tick,
            tick_s=0.01,
        )
    assert len(finished_jobs) == 2
    assert ticks[0]["ingest"] == 2  # right after submitting, before waiting
    assert len(ticks) >= 3 and finished_at_tick[:3] == [0, 0, 0]
    assert all(t["ingest"] == 2 for t in ticks[:3])
