"""What runs when: the per-question stage jobs of a run, each within its stage's limit.

Mapping every stage at once would park waiting work on the runner's threads; here a job is
submitted only once its input exists and its stage has a free slot, so a question's answer
starts as soon as its ingestion is done and no thread waits on another. Later stages go first
(lme_bench.run.stage_table.SERVE_ORDER), so questions finish (and show in the progress) early.
A stage given a batch size takes up to that many waiting questions into one submission
(lme_bench.run.batch). A job whose result the cache holds finishes without a submission. The
jobs of a held-back stage (`[qa] batch`, `[judge] batch`) wait until every job before them is
done, then go as one provider batch job.

All of it runs on plain concurrent futures: the caller's `submit` starts the work (the flow
makes a Prefect task run) and says how to read each job's outcome once its future is done.
"""

from __future__ import annotations

import concurrent.futures
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from lme_bench.run.collect import Done, Job
from lme_bench.run.stage_table import PER_QUESTION, SERVE_ORDER


@dataclass(frozen=True, slots=True)
class Running:
    """Submitted work: `future` is done when it has ended, then `outcomes()` gives each of its
    jobs' Done, in the jobs' order."""

    future: concurrent.futures.Future[Any]
    outcomes: Callable[[], list[Done]]


class Watch(Protocol):
    """Told of every finished job, and of the jobs in flight while none finishes."""

    def finished(self, done: Done, reused: int) -> None: ...

    def tick(self, running: dict[str, int], reused: int) -> None: ...


class _Unwatched:
    def finished(self, done: Done, reused: int) -> None:
        pass

    def tick(self, running: dict[str, int], reused: int) -> None:
        pass


def _never_cached(job: Job) -> tuple[bool, Any]:
    return False, None


@dataclass
class Scheduler:
    """Runs jobs and the jobs `follow` returns for each finished one (RunCollector.finished).

    `limits[stage]`: submissions of a stage at once. `lookup(job)`: (True, value) when the
    cache holds the job's result; `lookup_many(jobs)`, when given, looks up several at once
    (each job's answer in the jobs' order): the jobs ready together are looked up in one call,
    so a store that answers slowly (a bucket) is asked many at a time, not one after another.
    `batch_sizes[stage]`: jobs per submission of that stage.
    `held_back`: stages whose jobs wait for every job before them, then go to
    `run_held_back(stage, jobs)` (those not in the cache), which returns their Done.
    `every_ingestion_started` is called once no ingestion waits; `watch.tick` gets the
    submissions in flight by stage once jobs are submitted and again every `tick_s` seconds
    while none finishes."""

    follow: Callable[[Done], list[Job]]
    limits: dict[str, int]
    submit: Callable[[list[Job]], Running]
    lookup: Callable[[Job], tuple[bool, Any]] = _never_cached
    lookup_many: Callable[[list[Job]], list[tuple[bool, Any]]] | None = None
    batch_sizes: dict[str, int] = field(default_factory=dict)
    held_back: frozenset[str] = frozenset()
    run_held_back: Callable[[str, list[Job]], list[Done]] | None = None
    every_ingestion_started: Callable[[], None] = lambda: None
    watch: Watch = field(default_factory=_Unwatched)
    tick_s: float = 1.0
    reused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SERVE_ORDER, 0))
    _waiting: list[Job] = field(default_factory=list)  # held back

    @property
    def from_cache(self) -> int:
        return sum(self.reused.values())

    def run(self, jobs: list[Job]) -> None:
        """Every job and what follows it, then each held-back stage in pipeline order."""
        self._run_jobs(jobs)
        for stage in PER_QUESTION:
            if stage in self.held_back:
                self._run_waiting(stage)

    def _cached(self, jobs: list[Job]) -> list[Done | None]:
        """Each job's Done when the cache holds its result, else None."""
        if self.lookup_many is not None and len(jobs) > 1:
            found = self.lookup_many(jobs)
        else:
            found = [self.lookup(job) for job in jobs]
        dones: list[Done | None] = []
        for job, (hit, value) in zip(jobs, found, strict=True):
            self.reused[job.stage] += hit
            dones.append(Done(job, value, None, from_cache=True) if hit else None)
        return dones

    def _finished(self, done: Done) -> list[Job]:
        follow = self.follow(done)
        self._waiting += [job for job in follow if job.stage in self.held_back]
        self.watch.finished(done, self.from_cache)
        return [job for job in follow if job.stage not in self.held_back]

    def _finish_all(self, found: Iterable[Done]) -> list[Job]:
        return [job for done in found for job in self._finished(done)]

    def _run_waiting(self, stage: str) -> None:
        """The held-back jobs of `stage`: from the cache, else in one batch job; then what
        follows them."""
        jobs = [job for job in self._waiting if job.stage == stage]
        self._waiting = [job for job in self._waiting if job.stage != stage]
        follow, left = [], []
        for job, found in zip(jobs, self._cached(jobs), strict=True):
            if found is None:
                left.append(job)
            else:
                follow += self._finished(found)
        if left:
            if self.run_held_back is None:
                raise ValueError(f"stage {stage!r} is held back but nothing runs it")
            follow += self._finish_all(self.run_held_back(stage, left))
        if follow:
            self._run_jobs(follow)

    def _run_jobs(self, jobs: list[Job]) -> None:
        queues = _Queues(self._cached, self._finished, self.limits, self.batch_sizes)
        queues.enqueue(jobs)
        running: dict[concurrent.futures.Future[Any], tuple[str, Running]] = {}
        in_flight: dict[str, int] = dict.fromkeys(SERVE_ORDER, 0)
        ingestions_waiting = True
        while running or queues.any():
            for stage, taken in queues.take(in_flight):
                work = self.submit(taken)
                running[work.future] = (stage, work)
                in_flight[stage] += 1
            if ingestions_waiting and not queues.waiting("ingest"):
                ingestions_waiting = False
                self.every_ingestion_started()
            for stage, work in self._wait(running, in_flight):
                in_flight[stage] -= 1
                for done in work.outcomes():
                    queues.enqueue(self._finished(done))

    def _wait(
        self,
        running: dict[concurrent.futures.Future[Any], tuple[str, Running]],
        in_flight: dict[str, int],
    ) -> list[tuple[str, Running]]:
        """The submissions that ended, once one has; ticking meanwhile."""
        self.watch.tick(dict(in_flight), self.from_cache)
        done: set[concurrent.futures.Future[Any]] = set()
        while running and not done:
            done, _ = concurrent.futures.wait(
                list(running), timeout=self.tick_s, return_when=concurrent.futures.FIRST_COMPLETED
            )
            if not done:
                self.watch.tick(dict(in_flight), self.from_cache)
        return [running.pop(future) for future in done]


class _Queues:
    """Each stage's jobs waiting for a slot; a job the cache holds never waits."""

    def __init__(
        self,
        cached: Callable[[list[Job]], list[Done | None]],
        finished: Callable[[Done], list[Job]],
        limits: dict[str, int],
        sizes: dict[str, int],
    ) -> None:
        self._cached, self._finished = cached, finished
        self._limits, self._sizes = limits, sizes
        self._queues: dict[str, deque[Job]] = {stage: deque() for stage in SERVE_ORDER}

    def enqueue(self, new: list[Job]) -> None:
        """Queue the jobs the cache lacks; a job it holds finishes here, and what follows it is
        looked up in turn, with the other jobs its step made ready (one look-up call a step)."""
        ready = new
        while ready:
            following: list[Job] = []
            for job, found in zip(ready, self._cached(ready), strict=True):
                if found is None:
                    self._queues[job.stage].append(job)
                else:
                    following += self._finished(found)
            ready = following

    def any(self) -> bool:
        return any(self._queues.values())

    def waiting(self, stage: str) -> bool:
        return bool(self._queues[stage])

    def take(self, in_flight: dict[str, int]) -> list[tuple[str, list[Job]]]:
        """What to submit now, later stages first: a batch (or one job) per free slot."""
        taken: list[tuple[str, list[Job]]] = []
        for stage in SERVE_ORDER:
            queue, free = self._queues[stage], self._limits[stage] - in_flight[stage]
            size = self._sizes.get(stage, 1)
            while queue and free > 0:
                taken.append((stage, [queue.popleft() for _ in range(min(size, len(queue)))]))
                free -= 1
        return taken
