"""The core scheduler (lme_bench.run.scheduler) on futures of a plain thread pool, no Prefect:
stage limits, later stages first, batches, cache hits without a submission, held-back stages,
and the moment it says every ingestion has started."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.run.collect import AnswerJob, Done, IngestJob, Job, JudgeJob, RetrievalJob
from lme_bench.run.scheduler import Running, Scheduler

LIMITS = {"ingest": 1, "retrieval": 1, "answer": 1, "judge": 1}


def _ingest_job(index: int) -> IngestJob:
    return IngestJob(index, MemoryLocation(f"q{index}", f"m{index}", 0))


def _outcome(index: int) -> IngestOutcome:
    return IngestOutcome(f"q{index}", f"m{index}", 1, 0.0)


def _hypothesis(index: int) -> HypothesisRow:
    return HypothesisRow(
        question_id=f"q{index}",
        question_type="single-session-user",
        is_abstention=False,
        hypothesis="an answer",
        strategy="single",
        qa_model="fake:quote-memory",
        prompt_version="v1",
        top_ke=10,
        top_kc=3,
    )


def _pipeline(done: Done) -> list[Job]:
    """ingest -> answer -> judge, as RunCollector.finished has it for an answer-only run."""
    job = done.job
    if isinstance(job, IngestJob):
        return [AnswerJob(job.index, _outcome(job.index))]
    if isinstance(job, AnswerJob):
        return [JudgeJob(job.index, _hypothesis(job.index))]
    return []


def _pool_submit(
    pool: concurrent.futures.ThreadPoolExecutor,
    work: Callable[[Job], Any] = lambda job: job.index,
    log: list[list[Job]] | None = None,
) -> Callable[[list[Job]], Running]:
    def submit(jobs: list[Job]) -> Running:
        if log is not None:
            log.append(jobs)
        future = pool.submit(lambda: [work(job) for job in jobs])

        def outcomes() -> list[Done]:
            return [Done(j, v, None) for j, v in zip(jobs, future.result(), strict=True)]

        return Running(future, outcomes)

    return submit


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
        return _outcome(job.index)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        run = _pool_submit(pool, work)

        def submit(jobs: list[Job]) -> Running:
            submitted.extend(jobs)
            if len([j for j in submitted if j.stage == "ingest"]) == ingest_limit:
                release.set()  # the first ones may finish once the limit is reached
            return run(jobs)

        def follow(done: Done) -> list[Job]:
            if isinstance(done.job, IngestJob):
                assert isinstance(done.value, IngestOutcome)
                return [RetrievalJob(done.job.index, done.value)]
            return []

        def started_all() -> None:
            said.append(len([j for j in submitted if j.stage == "ingest"]))

        limits = {"ingest": ingest_limit, "retrieval": 2, "answer": 1, "judge": 1}
        jobs: list[Job] = [_ingest_job(i) for i in range(questions)]
        Scheduler(follow, limits, submit, every_ingestion_started=started_all).run(jobs)

    assert said == [questions]  # once, when the last ingestion went in
    assert [j.stage for j in submitted].count("retrieval") == questions
    assert peak["ingest"] <= ingest_limit and peak["retrieval"] <= 2


class _Watch:
    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.ticks: list[dict[str, int]] = []
        self.finished_at_tick: list[int] = []
        self.done: list[Done] = []
        self.reused_seen: list[int] = []

    def finished(self, done: Done, reused: int) -> None:
        self.done.append(done)
        self.reused_seen.append(reused)

    def tick(self, running: dict[str, int], reused: int) -> None:
        self.ticks.append(running)
        self.finished_at_tick.append(len(self.done))
        if len(self.ticks) == 3:  # two heartbeats while the jobs still run: let them finish
            self.release.set()


def test_the_heartbeat_ticks_while_the_first_jobs_run_and_before_any_finishes() -> None:
    release = threading.Event()
    watch = _Watch(release)

    def work(job: Job) -> IngestOutcome:
        assert release.wait(30), "the scheduler ticked while the job ran"
        return _outcome(job.index)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        Scheduler(
            lambda done: [],
            {"ingest": 2, "retrieval": 1, "answer": 1, "judge": 1},
            _pool_submit(pool, work),
            watch=watch,
            tick_s=0.01,
        ).run([_ingest_job(i) for i in range(2)])
    assert len(watch.done) == 2
    assert watch.ticks[0]["ingest"] == 2  # right after submitting, before waiting
    assert len(watch.ticks) >= 3 and watch.finished_at_tick[:3] == [0, 0, 0]
    assert all(t["ingest"] == 2 for t in watch.ticks[:3])


def test_later_stages_go_first_and_each_stage_keeps_to_its_limit() -> None:
    log: list[list[Job]] = []
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # one job at a time, in order
        Scheduler(_pipeline, LIMITS, _pool_submit(pool, log=log)).run(
            [_ingest_job(i) for i in range(3)]
        )
    order = [(jobs[0].stage, jobs[0].index) for jobs in log]
    assert len(order) == 9
    # once the first ingestion is done, its answer and the next ingestion may both go: the answer
    # is submitted first (so its question finishes early)
    assert order[:3] == [("ingest", 0), ("answer", 0), ("ingest", 1)]


def test_a_cached_result_finishes_its_job_without_a_submission_and_is_counted() -> None:
    log: list[list[Job]] = []
    watch = _Watch(threading.Event())

    def lookup(job: Job) -> tuple[bool, Any]:
        return (True, f"kept {job.index}") if job.stage == "answer" else (False, None)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        scheduler = Scheduler(_pipeline, LIMITS, _pool_submit(pool, log=log), lookup, watch=watch)
        scheduler.run([_ingest_job(i) for i in range(3)])
    submitted = [job.stage for jobs in log for job in jobs]
    assert submitted.count("answer") == 0 and submitted.count("judge") == 3
    assert scheduler.reused == {"judge": 0, "answer": 3, "retrieval": 0, "ingest": 0}
    cached = [d for d in watch.done if d.from_cache]
    assert [d.value for d in cached] == ["kept 0", "kept 1", "kept 2"]
    assert watch.reused_seen[-1] == 3


def test_jobs_ready_together_are_looked_up_in_one_call() -> None:
    """A rerun whose every result is cached: each step's jobs go to `lookup_many` together
    (the ingestions, then the answers they made ready, then the judgments), nothing is
    submitted, and every question finishes in order."""
    calls: list[list[tuple[str, int]]] = []
    log: list[list[Job]] = []
    watch = _Watch(threading.Event())

    def lookup_many(jobs: list[Job]) -> list[tuple[bool, Any]]:
        calls.append([(job.stage, job.index) for job in jobs])
        return [(True, _outcome(j.index) if j.stage == "ingest" else f"kept {j.index}")
                for j in jobs]  # fmt: skip

    def one_at_a_time(job: Job) -> tuple[bool, Any]:
        raise AssertionError("jobs ready together are looked up together")

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        scheduler = Scheduler(
            _pipeline, LIMITS, _pool_submit(pool, log=log), one_at_a_time,
            lookup_many=lookup_many, watch=watch,
        )  # fmt: skip
        scheduler.run([_ingest_job(i) for i in range(3)])
    assert calls == [
        [("ingest", 0), ("ingest", 1), ("ingest", 2)],
        [("answer", 0), ("answer", 1), ("answer", 2)],
        [("judge", 0), ("judge", 1), ("judge", 2)],
    ]
    assert log == []
    assert scheduler.reused == {"judge": 3, "answer": 3, "retrieval": 0, "ingest": 3}


def test_a_batched_stage_takes_up_to_its_batch_size_per_submission() -> None:
    log: list[list[Job]] = []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        limits = LIMITS | {"ingest": 1}
        Scheduler(
            lambda done: [], limits, _pool_submit(pool, log=log), batch_sizes={"ingest": 3}
        ).run([_ingest_job(i) for i in range(7)])
    assert [len(jobs) for jobs in log] == [3, 3, 1]
    assert [job.index for jobs in log for job in jobs] == list(range(7))


def test_a_held_back_stage_waits_for_every_job_before_it_and_goes_as_one_call() -> None:
    log: list[list[Job]] = []
    held: list[tuple[str, list[int], int]] = []
    answered: list[int] = []

    def follow(done: Done) -> list[Job]:
        if isinstance(done.job, AnswerJob):
            answered.append(done.job.index)
        return _pipeline(done)

    def run_held_back(stage: str, jobs: list[Job]) -> list[Done]:
        held.append((stage, [job.index for job in jobs], len(answered)))
        return [Done(job, f"judged {job.index}", None) for job in jobs]

    def lookup(job: Job) -> tuple[bool, Any]:  # one judgement is in the cache
        return (True, "kept") if isinstance(job, JudgeJob) and job.index == 1 else (False, None)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        scheduler = Scheduler(
            follow,
            LIMITS | {"answer": 2},
            _pool_submit(pool, log=log),
            lookup,
            held_back=frozenset({"judge"}),
            run_held_back=run_held_back,
        )
        scheduler.run([_ingest_job(i) for i in range(4)])
    assert all(job.stage != "judge" for jobs in log for job in jobs)  # never a task of its own
    assert held == [("judge", [0, 2, 3], 4)]  # once, after all four answers, the cached left out
    assert scheduler.reused["judge"] == 1
