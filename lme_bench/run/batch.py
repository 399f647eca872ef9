"""Several questions in one task run, for the stages that call no model.

A task run costs Prefect tens of milliseconds of CPU (its engine here, recording its states on
the server), while raw ingestion into a local store or a search takes about as long per
question. So those stages take their questions in batches: one task run works through its
questions one after the other, each with the retries a task of its own would get (transient
faults only, with backoff and jitter), and a question that fails fails alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from lme_bench.backends.protocol import Capability
from lme_bench.backends.registry import backend_class
from lme_bench.common.stop_signal import STOPPING, RunStopped, check_stopping
from lme_bench.common.transient import is_transient
from lme_bench.config.settings import Settings

T = TypeVar("T")
Item = TypeVar("Item")

# What a task of its own gets on a transient fault: two retries, after 2 s then 10 s, ± 50%.
RETRY_DELAYS = (2.0, 10.0)
RETRY_JITTER = 0.5
# Auto size: about this many task runs per slot of the stage's limit, so the batches still
# spread over the slots and the last ones end close together.
BATCHES_PER_SLOT = 4
MOST_PER_TASK = 64


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
    stages = {"retrieval"}
    if settings.ingest.mode == "raw":
        capabilities = backend_class(settings.memory.backend).capabilities
        if Capability.EXTRACTS not in capabilities:
            stages.add("ingest")
    return stages


def questions_per_task(settings: Settings, questions: int) -> int:
    """`[run] questions_per_task`, or by default enough that each slot of the ingest limit
    gets about BATCHES_PER_SLOT task runs (1, a task per question, for small runs)."""
    chosen = settings.run.questions_per_task
    if chosen is not None:
        return chosen
    slots = settings.limits.ingest * BATCHES_PER_SLOT
    return max(1, min(MOST_PER_TASK, questions // slots))


def run_each(
    items: Sequence[Item],
    work: Callable[[Item], T],
    *,
    sleep: Callable[[float], object] = STOPPING.wait,
    rng: random.Random | None = None,
) -> list[Outcome[T]]:
    """`work` on every item in order, each retried on transient faults as a task would be.
    Once the run is stopping (a wait for a retry ends then too), the items left end with
    RunStopped."""
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
                delay = RETRY_DELAYS[attempt - 1]
                sleep(delay * (1 + rng.uniform(-RETRY_JITTER, RETRY_JITTER)))
    return outcomes
