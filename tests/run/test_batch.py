"""Questions in batches (lme_bench.run.batch): which stages take them, how many a task run
gets, and each question's own retries and failure inside a batch."""

from __future__ import annotations

import logging
import pickle
import random
import sqlite3

import pytest

from lme_bench.backends.protocol import BackendParams, Capability
from lme_bench.common.secrets import RedactedError
from lme_bench.common.stop_signal import STOPPING, RunStopped
from lme_bench.config.settings import Settings
from lme_bench.run.batch import (
    RETRY_DELAYS,
    BatchFailed,
    Outcome,
    batchable_stages,
    questions_per_task,
    run_each,
    sendable,
)
from lme_bench.run.transient import is_transient


class Extracting:
    """Stands for a memory system that rewrites what it is given (only its class is read)."""

    Params = BackendParams
    name = "extracting"
    capabilities = frozenset({Capability.PROVENANCE, Capability.EXTRACTS})


def _settings(**sections: object) -> Settings:
    return Settings.model_validate(sections)


def test_stages_that_call_no_model_are_batched() -> None:
    assert batchable_stages(_settings()) == {"ingest", "retrieval"}  # raw, embedded
    agentic = _settings(ingest={"mode": "agentic"}, models={"agent": "fake:note-taker"})
    assert batchable_stages(agentic) == {"retrieval"}  # the memory agent calls a model
    extracting = _settings(memory={"backend": "tests.run.test_batch:Extracting"})
    assert batchable_stages(extracting) == {"retrieval"}  # the system may call its model
    with_model = _settings(models={"memory": "fake:mem0-extractor"})
    assert batchable_stages(with_model) == set()  # its searches may call it too


def test_questions_per_task_by_default_and_as_set() -> None:
    settings = _settings()  # ingest limit 8: 32 task runs' worth of questions before batching
    assert questions_per_task(settings, 34) == 1
    assert questions_per_task(settings, 64) == 2
    assert questions_per_task(settings, 500) == 15
    assert questions_per_task(settings, 100_000) == 64
    assert questions_per_task(_settings(limits={"ingest": 2}), 500) == 62
    assert questions_per_task(_settings(run={"questions_per_task": 5}), 34) == 5


def test_each_item_is_retried_alone_on_transient_faults() -> None:
    waits: list[float] = []
    attempts: dict[str, int] = {}

    def work(item: str) -> str:
        attempts[item] = attempts.get(item, 0) + 1
        if item == "flaky" and attempts[item] < 3:
            raise sqlite3.OperationalError("database is locked")
        if item == "broken":
            raise ValueError("no such memory")
        if item == "down":
            raise ConnectionError("refused")
        return item.upper()

    outcomes = run_each(
        ["a", "flaky", "broken", "down", "b"], work, sleep=waits.append, rng=random.Random(0)
    )
    assert [o.value for o in outcomes] == ["A", "FLAKY", None, None, "B"]
    assert [o.attempts for o in outcomes] == [1, 3, 1, 3, 1]
    assert isinstance(outcomes[2].error, ValueError)  # not transient: no retry
    assert isinstance(outcomes[3].error, ConnectionError)  # transient, retries used up
    assert attempts == {"a": 1, "flaky": 3, "broken": 1, "down": 3, "b": 1}
    # each retry waits its delay, ± the jitter
    for wait, delay in zip(waits, RETRY_DELAYS * 2, strict=True):
        assert delay * 0.5 <= wait <= delay * 1.5


def test_a_stopping_run_ends_the_items_left() -> None:
    done: list[int] = []

    def work(item: int) -> int:
        done.append(item)
        if item == 1:
            STOPPING.set()
        return item

    try:
        outcomes = run_each([0, 1, 2, 3], work)
    finally:
        STOPPING.clear()
    assert done == [0, 1]
    assert [o.value for o in outcomes[:2]] == [0, 1]
    assert all(isinstance(o.error, RunStopped) for o in outcomes[2:])


def test_batch_failed_names_the_failed_questions() -> None:
    outcomes: list[Outcome[object]] = [
        Outcome(1, None),
        Outcome(None, ValueError("no such memory")),
    ]
    error = BatchFailed(outcomes, ["q1", "q2"])
    assert str(error) == "1 of 2 questions failed: q2: ValueError: no such memory"
    assert error.outcomes == outcomes


@pytest.mark.parametrize("size", [1, 2])
def test_outcome_keeps_attempts(size: int) -> None:
    outcomes = run_each(list(range(size)), lambda item: item * 2)
    assert [(o.value, o.error, o.attempts) for o in outcomes] == [
        (2 * i, None, 1) for i in range(size)
    ]


class ToolFailed(Exception):
    """Like an MCP tool error: built from parts, so it cannot be rebuilt from its message."""

    def __init__(self, tool: str, detail: str) -> None:
        super().__init__(f"{tool} failed: {detail}")


def test_an_error_a_worker_cannot_send_back_becomes_its_text() -> None:
    outcomes = [
        Outcome(None, ToolFailed("add_entry", "disk full")),
        Outcome(None, ConnectionError("refused")),
        Outcome(3, None),
    ]
    sent = [pickle.loads(pickle.dumps(sendable(o))) for o in outcomes]
    assert isinstance(sent[0].error, RedactedError)
    assert str(sent[0].error) == "ToolFailed: add_entry failed: disk full"
    assert not is_transient(sent[0].error)
    assert isinstance(sent[1].error, ConnectionError) and is_transient(sent[1].error)
    assert sent[2] == outcomes[2]


def test_each_retry_is_one_warning_naming_the_item_the_attempt_and_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def work(item: str) -> str:
        raise ConnectionError("refused")

    with caplog.at_level(logging.WARNING, logger="lme_bench.run.batch"):
        run_each(["q1"], work, sleep=lambda _: None, describe=lambda item: f"ingest {item}")
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    for attempt, message in enumerate(messages, start=1):
        assert message.startswith(
            f"ingest q1: attempt {attempt} of 3 failed with ConnectionError: refused (at"
        )
        assert message.endswith(" in work); retrying")
