"""Several questions in one task run, for the stages that call no model.

A task run costs Prefect tens of milliseconds of CPU (its engine here, recording its states on
the server), while raw ingestion into a local store or a search takes about as long per
question. So those stages take their questions in batches: one task run works through its
questions one after the other, each with the retries a task of its own would get (transient
faults only, with backoff and jitter), and a question that fails fails alone. That work is
Python holding the interpreter lock, so batches run in worker processes (BatchRunner), one
per core: threads of one process would take turns.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import random
import threading
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from multiprocessing import get_context
from typing import Any, Generic, TypeVar

from lme_bench.common.secrets import RedactedError
from lme_bench.common.stop_signal import STOPPING, RunStopped, check_stopping
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.run import steps
from lme_bench.run.builds import BuildUploads, remade_cheaply
from lme_bench.run.failure_origin import copy_origin
from lme_bench.run.transient import is_transient, retry_notice, scrubbed

T = TypeVar("T")
Item = TypeVar("Item")
_log = logging.getLogger(__name__)

# What a task of its own gets on a transient fault: two retries, after 2 s then 10 s, ± 50%.
RETRY_DELAYS = (2.0, 10.0)
RETRY_JITTER = 0.5
# Auto size: about this many task runs per slot of the stage's limit, so the batches still
# spread over the slots and the last ones end close together.
BATCHES_PER_SLOT = 4
MOST_PER_TASK = 64
MOST_PROCESSES = 4


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """One question's result in a batch: its value, or the error that ended it."""

    value: T | None
    error: BaseException | None
    attempts: int = 1


class BatchFailed(Exception):
    """Some questions of a batch failed (after their retries): the task run fails, and the
    flow still gets every question's outcome from the exception."""

    def __init__(self, outcomes: Sequence[Outcome[object]], names: Sequence[str]) -> None:
        super().__init__(outcomes)
        self.outcomes = list(outcomes)
        self.names = list(names)

    def __str__(self) -> str:
        failed = [
            f"{name}: {type(o.error).__name__}: {o.error}"
            for name, o in zip(self.names, self.outcomes, strict=True)
            if o.error is not None
        ]
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        return (
            f"{len(failed)} of {len(self.outcomes)} questions failed: "
            + "; ".join(failed[:3])
            + more
        )


def batchable_stages(settings: Settings) -> set[str]:
    """The stages whose per-question work calls no model: retrieval, unless the memory system
    calls a model of its own ([models] memory, e.g. to embed queries); ingestion when it is raw
    and the memory system neither extracts nor calls a model."""
    if settings.models.memory:
        return set()
    return {"retrieval", "ingest"} if remade_cheaply(settings) else {"retrieval"}


def questions_per_task(settings: Settings, questions: int) -> int:
    """`[run] questions_per_task`, or by default enough that each slot of the ingest limit
    gets about BATCHES_PER_SLOT task runs (1, a task per question, for small runs)."""
    chosen = settings.run.questions_per_task
    if chosen is not None:
        return chosen
    slots = settings.limits.ingest * BATCHES_PER_SLOT
    return max(1, min(MOST_PER_TASK, questions // slots))


def worker_processes(settings: Settings) -> int:
    """`[run] processes`, or by default one per core (at most MOST_PROCESSES)."""
    chosen = settings.run.processes
    return chosen if chosen is not None else min(os.cpu_count() or 1, MOST_PROCESSES)


def run_each(
    items: Sequence[Item],
    work: Callable[[Item], T],
    *,
    sleep: Callable[[float], object] = STOPPING.wait,
    rng: random.Random | None = None,
    describe: Callable[[Item], str] = str,
) -> list[Outcome[T]]:
    """`work` on every item in order, each retried on transient faults as a task would be,
    each retry said in one WARNING line naming the item (`describe`). Once the run is stopping
    (a wait for a retry ends then too), the items left end with RunStopped."""
    rng = rng or random.Random()
    outcomes: list[Outcome[T]] = []
    for item in items:
        attempt = 0
        while True:
            attempt += 1
            try:
                check_stopping()
                outcomes.append(Outcome(work(item), None, attempt))
                break
            except RunStopped as stopped:
                outcomes.append(Outcome(None, stopped, attempt))
                break
            except Exception as error:
                if attempt > len(RETRY_DELAYS) or not is_transient(error):
                    outcomes.append(Outcome(None, error, attempt))
                    break
                attempts = len(RETRY_DELAYS) + 1
                _log.warning(retry_notice(describe(item), attempt, attempts, error))
                delay = RETRY_DELAYS[attempt - 1]
                sleep(delay * (1 + rng.uniform(-RETRY_JITTER, RETRY_JITTER)))
    return outcomes


@dataclass(frozen=True, slots=True)
class Batch:
    """Questions of one stage for one task run. Upstreams: a MemoryLocation per question for
    ingest, an IngestOutcome for retrieval. `memory`, the run's memory system as configured,
    travels to a worker process as its settings and is derived there once for the batch
    (lme_bench.backends.configured); None: derived from `settings`, once for the batch."""

    stage: str
    refs: Sequence[QuestionRef]
    upstreams: Sequence[Any]
    settings: Settings
    scope: str
    memory: steps.ConfiguredBackend | None = None

    def _work(
        self,
        ref: QuestionRef,
        upstream: Any,
        memory: steps.ConfiguredBackend,
        uploads: BuildUploads,
    ) -> Coroutine[Any, Any, Any]:
        if self.stage == "ingest":
            return steps.ingest_question(ref, self.settings, self.scope, upstream, memory, uploads)
        if self.stage == "retrieval":
            return steps.evaluate_question(ref, upstream, self.settings, memory)
        raise ValueError(f"stage {self.stage!r} is not run in batches")

    def run(self) -> list[Outcome[Any]]:
        """Every question, in this thread; an error whose text holds a secret comes back
        masked. The memory builds ingested are put to the build store while the next
        question is ingested; a question whose put failed fails."""
        memory = self.memory or steps.configured_backend(self.settings)
        uploads = BuildUploads(self.settings)

        def one(pair: tuple[QuestionRef, Any]) -> Any:
            try:
                return asyncio.run(self._work(*pair, memory, uploads))
            except Exception as exc:
                clean = scrubbed(exc, self.settings)
                if clean is exc:
                    raise
                raise clean from None

        def describe(pair: tuple[QuestionRef, Any]) -> str:
            return f"{self.stage} {pair[0].question_id} ({pair[0].question_type})"

        pairs = list(zip(self.refs, self.upstreams, strict=True))
        outcomes = run_each(pairs, one, describe=describe)
        return _with_puts(outcomes, uploads.finish(), self.settings)


def _with_puts(
    outcomes: list[Outcome[Any]], failed: dict[str, Exception], settings: Settings
) -> list[Outcome[Any]]:
    """The outcomes, an ingestion whose build was not put ending with that error."""
    if not failed:
        return outcomes
    return [
        Outcome(None, scrubbed(failed[o.value.build_object], settings), o.attempts)
        if o.value is not None and getattr(o.value, "build_object", "") in failed
        else o
        for o in outcomes
    ]


def sendable(outcome: Outcome[Any]) -> Outcome[Any]:
    """The outcome as a worker can send it back: an error that does not pickle becomes its
    text, keeping its retry decision."""
    if outcome.error is None:
        return outcome
    try:
        pickle.loads(pickle.dumps(outcome.error))  # an error class may not rebuild from args
    except Exception:
        text = f"{type(outcome.error).__name__}: {outcome.error}"
        sent = RedactedError(text, is_transient(outcome.error))
        copy_origin(outcome.error, sent)
        return replace(outcome, error=sent)
    return outcome


def _in_worker(batch: Batch) -> list[Outcome[Any]]:
    return [sendable(o) for o in batch.run()]


def _ready() -> None:
    """A new worker's first job: returns once it has imported the stages."""


class BatchRunner:
    """Runs batches in worker processes (started at once, so they import while the run goes
    on), or in the calling thread when `processes` is 1. Workers are spawned, never forked
    from this multi-threaded process; a pool whose worker died is replaced once per batch."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._lock = threading.Lock()
        self._pool = self._start() if processes > 1 else None

    def _start(self) -> ProcessPoolExecutor:
        pool = ProcessPoolExecutor(self.processes, mp_context=get_context("spawn"))
        for _ in range(self.processes):
            pool.submit(_ready)
        return pool

    def run(self, batch: Batch) -> list[Outcome[Any]]:
        pool = self._pool
        if pool is None:
            return batch.run()
        try:
            return pool.submit(_in_worker, batch).result()
        except BrokenProcessPool:  # a worker died (killed, out of memory): a new pool, once
            with self._lock:
                if self._pool is pool:
                    pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = self._start()
                fresh = self._pool
            if fresh is None:
                raise RuntimeError("the batch runner was closed while a batch ran") from None
            return fresh.submit(_in_worker, batch).result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
