"""What the terminal's log shows of a task run's errors: a question task's failure without its
traceback (its question's failure line has it), any other error of the task run (Prefect's
failed commit of its result) with it; and the records the command tells itself at the end."""

from __future__ import annotations

import logging
import sys

from lme_bench.run.failure_origin import ToldByTheCommand, TracebackOnce


def _record(message: str, task: str | None, error: BaseException) -> logging.LogRecord:
    try:
        raise error
    except type(error):
        info = sys.exc_info()
    name = "prefect.task_runs" if task else "prefect.flow_runs"
    record = logging.LogRecord(name, logging.ERROR, __file__, 1, message, (), info)
    if task:
        record.task_name = task
    return record


def test_a_failed_commit_keeps_its_cause_and_a_question_failure_leaves_it_to_its_line() -> None:
    once = TracebackOnce()
    commit = _record(
        "An error was encountered while committing transaction 'answer-conv-49-q27'",
        "answer",
        KeyError("/results/.cache/tasks/answer-conv-49-q27"),
    )
    assert once.filter(commit) and commit.exc_info is not None
    failed = _record("Task run failed with exception: KeyError('x')", "answer", KeyError("x"))
    assert once.filter(failed) and failed.exc_info is None


def test_the_flow_runs_exception_and_a_run_task_failure_are_left_to_the_command() -> None:
    told = ToldByTheCommand()
    assert not told.filter(_record("Encountered exception during execution", None, OSError()))
    assert not told.filter(
        _record("Finished in state Failed('boom')", "locate-memories", RuntimeError("boom"))
    )
    assert told.filter(_record("Finished in state Failed('x')", "answer", RuntimeError("x")))
    assert told.filter(_record("An error was encountered while committing", "answer", OSError()))
