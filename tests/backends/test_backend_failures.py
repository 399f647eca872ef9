"""A backend's failure as a run meets it: TransientMemoryError is retried and other errors are
not; the question's error names the backend's file and line, and the log shows the traceback
once, also for an error that came back from a worker process."""

from __future__ import annotations

import inspect
import logging
import pickle
from pathlib import Path

import pytest

from lme_bench.backends.protocol import TransientMemoryError
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import prepare_dataset, select_questions
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.run import batch
from lme_bench.run.collect import Done, IngestJob, RunCollector, error_text
from lme_bench.run.failure_origin import show_tracebacks_once
from lme_bench.run.steps import bundled_sample
from lme_bench.run.transient import is_transient
from tests.backends import failing_backend

MODULE = "tests.backends.failing_backend"


def _retrieval_batch(tmp_path: Path, backend: str) -> batch.Batch:
    settings = Settings.model_validate(
        {"memory": {"backend": f"{MODULE}:{backend}"}, "run": {"results_dir": str(tmp_path)}}
    )
    (ref,) = select_questions(prepare_dataset(bundled_sample(), tmp_path / "cache"), limit=1)
    ingested = IngestOutcome(ref.question_id, "memory-1", 0, 0.0)
    return batch.Batch("retrieval", [ref], [ingested], settings, "")


@pytest.fixture(autouse=True)
def _no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "RETRY_DELAYS", (0.0, 0.0))
    failing_backend.BusyOnce.searches = failing_backend.Broken.searches = 0


def test_a_transient_memory_error_in_search_is_retried(tmp_path: Path) -> None:
    (outcome,) = _retrieval_batch(tmp_path, "BusyOnce").run()
    assert outcome.error is None, outcome.error
    assert outcome.attempts == 2
    assert failing_backend.BusyOnce.searches == 2


def test_any_other_error_fails_the_question_at_once_naming_the_backends_line(
    tmp_path: Path,
) -> None:
    (outcome,) = _retrieval_batch(tmp_path, "Broken").run()
    assert isinstance(outcome.error, RuntimeError) and not is_transient(outcome.error)
    assert outcome.attempts == 1 and failing_backend.Broken.searches == 1
    line = inspect.getsourcelines(failing_backend._lost_index)[1] + 1
    expected = f"RuntimeError: the index is gone (at failing_backend.py:{line} in _lost_index)"
    assert error_text(outcome.error) == expected
    # as a worker process sends it back: pickled, without its traceback
    sent = pickle.loads(pickle.dumps(batch.sendable(outcome).error))
    assert sent.__traceback__ is None
    assert error_text(sent) == expected


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.mark.parametrize("pickled", [False, True], ids=["in-process", "from-a-worker"])
def test_the_traceback_is_logged_once(tmp_path: Path, pickled: bool) -> None:
    (outcome,) = _retrieval_batch(tmp_path, "Broken").run()
    error = outcome.error
    assert error is not None
    if pickled:
        error = pickle.loads(pickle.dumps(error))
    lines = _Lines()
    show_tracebacks_once([lines])
    root = logging.getLogger()
    root.addHandler(lines)
    try:
        # Prefect's task engine logs a failed task's exception (with retries exhausted) ...
        logging.getLogger("prefect.task_runs").error("Task run failed", exc_info=error)
        # ... and the flow records the question's failure, then the run ends on it
        refs = select_questions(prepare_dataset(bundled_sample(), tmp_path / "cache"), limit=1)
        collector = RunCollector(refs, _retrieval_batch(tmp_path, "Broken").settings)
        location = MemoryLocation(refs[0].question_id, "memory-1", 0)
        collector.finished(Done(IngestJob(0, location), None, error))
        logging.getLogger("prefect.flow_runs").error("Flow run failed", exc_info=error)
    finally:
        root.removeHandler(lines)
    text = "\n".join(lines.lines)
    assert text.count("Traceback (most recent call last)") == 1, text
    assert text.count('raise RuntimeError("the index is gone")') == 1, text
    assert f"question {refs[0].question_id} failed: RuntimeError: the index is gone (at " in text


def test_questions_failing_alike_share_one_traceback(tmp_path: Path) -> None:
    refs = select_questions(prepare_dataset(bundled_sample(), tmp_path / "cache"), limit=2)
    collector = RunCollector(refs, _retrieval_batch(tmp_path, "Broken").settings)
    lines = _Lines()
    show_tracebacks_once([lines])
    logging.getLogger().addHandler(lines)
    try:
        for index, ref in enumerate(refs):
            (outcome,) = _retrieval_batch(tmp_path, "Broken").run()
            assert outcome.error is not None
            location = MemoryLocation(ref.question_id, "memory-1", 0)
            collector.finished(Done(IngestJob(index, location), None, outcome.error))
    finally:
        logging.getLogger().removeHandler(lines)
    text = "\n".join(lines.lines)
    assert text.count("Traceback (most recent call last)") == 1, text
    assert f"question {refs[1].question_id} failed: RuntimeError: the index is gone" in text
    assert f"(traceback as for question {refs[0].question_id})" in text


def test_transient_failures_out_of_retries_share_one_traceback_and_a_bare_name(
    tmp_path: Path,
) -> None:
    refs = select_questions(prepare_dataset(bundled_sample(), tmp_path / "cache"), limit=2)
    collector = RunCollector(refs, _retrieval_batch(tmp_path, "Broken").settings)
    lines = _Lines()
    show_tracebacks_once([lines])
    logging.getLogger().addHandler(lines)
    try:
        for index, ref in enumerate(refs):
            try:
                failing_backend.always_busy()
            except TransientMemoryError as error:
                # what Prefect 3.8's task engine logs when the retries are used up
                logging.getLogger("prefect.task_runs").error(
                    f"Task run failed with exception: {error!r} - Retries are exhausted",
                    exc_info=error,
                    extra={"task_name": "ingest"},
                )
                location = MemoryLocation(ref.question_id, "memory-1", 0)
                collector.finished(Done(IngestJob(index, location), None, error))
    finally:
        logging.getLogger().removeHandler(lines)
    text = "\n".join(lines.lines)
    assert text.count("Traceback (most recent call last)") == 1, text
    assert f"question {refs[0].question_id} failed: TransientMemoryError: server busy (at" in text
    assert (
        "failed: lme_bench.backends.protocol." not in text
    )  # the traceback's own last line has it
    assert f"(traceback as for question {refs[0].question_id})" in text
