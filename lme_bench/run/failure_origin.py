"""Where a question's failure came from, told once: the file and line that raised it in the
error text of its rows, and its traceback once in the log.

An error is marked where the harness catches it (`keep_origin`), while its traceback is still
there: a batch worker sends errors back pickled, and pickling drops tracebacks but keeps these
marks. `TracebackOnce` on the log handlers lets each exception's traceback through once.
"""

from __future__ import annotations

import contextlib
import logging
import sysconfig
import traceback
from pathlib import Path

from lme_bench.common.secrets import redact_secrets

_ORIGIN = "lme_bench_origin"  # "file.py:42 in search"
_TRACEBACK = "lme_bench_traceback"  # the formatted traceback, secrets masked
_SHOWN = "lme_bench_traceback_shown"  # a log record already carried its traceback

_PACKAGE = Path(__file__).resolve().parents[1]
# lme-bench's own folders: the package, and the thin Prefect layer beside it in a clone
_HARNESS = tuple(
    f"{folder}/" for folder in (_PACKAGE, _PACKAGE.parent / "tasks", _PACKAGE.parent / "flows")
)
_LIBRARIES = tuple(
    {
        str(Path(p).resolve())
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (p := sysconfig.get_paths().get(key))
    }
)


def _is_harness(filename: str) -> bool:
    """lme-bench's own code (its tasks and flows too), an installed library or the standard
    library."""
    if filename.startswith("<"):
        return True
    path = str(Path(filename).resolve())
    return (
        path.startswith(_HARNESS)
        or path.startswith(_LIBRARIES)
        or "site-packages" in path
        or "dist-packages" in path
    )


def raised_at(error: BaseException) -> str | None:
    """`file.py:42 in name` of the innermost frame of the traceback that is not lme-bench's, a
    library's or the standard library's (the innermost frame when all are); None without one."""
    stored = getattr(error, _ORIGIN, None)
    if isinstance(stored, str):
        return stored
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return None
    own = [frame for frame in frames if not _is_harness(frame.filename)]
    frame = (own or frames)[-1]
    return f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"


def traceback_text(error: BaseException) -> str | None:
    """The error's traceback as text, secrets masked (kept from where it was caught)."""
    stored = getattr(error, _TRACEBACK, None)
    if isinstance(stored, str):
        return stored
    if error.__traceback__ is None:
        return None
    return redact_secrets("".join(traceback.format_exception(error)).rstrip())


def _set(error: BaseException, name: str, value: object) -> None:
    with contextlib.suppress(AttributeError, TypeError):  # an exception class with __slots__
        setattr(error, name, value)


def keep_origin(error: BaseException) -> None:
    """Mark `error` with where it was raised and its traceback, so both survive pickling."""
    where, text = raised_at(error), traceback_text(error)
    if where is not None:
        _set(error, _ORIGIN, where)
    if text is not None:
        _set(error, _TRACEBACK, text)


def copy_origin(source: BaseException, target: BaseException) -> None:
    """Give `target`, raised in `source`'s place, `source`'s origin and traceback."""
    keep_origin(source)
    for name in (_ORIGIN, _TRACEBACK):
        value = getattr(source, name, None)
        if value is not None:
            _set(target, name, value)


def exception_text(error: BaseException) -> str:
    """The exception as its traceback's last line ends, with its class's bare name, as
    Python shows built-in ones (`TransientMemoryError: busy`, not the module's path)."""
    text = "".join(traceback.format_exception_only(error)).strip()
    kind = type(error)
    qualified = f"{kind.__module__}.{kind.__qualname__}"
    return kind.__qualname__ + text[len(qualified) :] if text.startswith(qualified) else text


def with_origin(text: str, error: BaseException) -> str:
    """`text` followed by ` (at file.py:42 in name)` when the error's origin is known."""
    where = raised_at(error)
    return f"{text} (at {where})" if where and f"(at {where})" not in text else text


def traceback_shown(error: BaseException) -> bool:
    """Whether a log record already showed this error's traceback."""
    return bool(getattr(error, _SHOWN, False))


def log_failure(log: logging.Logger, message: str, error: BaseException) -> None:
    """`message` at ERROR with the error's traceback, unless the log has shown it already."""
    if traceback_shown(error):
        log.error(message)
    elif error.__traceback__ is not None:
        log.error(message, exc_info=error)
    else:
        text = traceback_text(error)
        log.error(f"{message}\n{text}" if text else message)
        _set(error, _SHOWN, True)


# Prefect's task runs of the per-question stages are named after the stage (tasks/benchmark.py).
_QUESTION_TASKS = frozenset({"ingest", "retrieval", "answer", "judge"})
_FAILED_STATE = ("Finished in state Failed", "Task run failed with")  # a task run's failure


def _told_with_its_question(record: logging.LogRecord) -> bool:
    """A per-question task run's failure record (Prefect logs a traceback when a transient
    fault has used up its retries): the question's failure line (lme_bench.run.collect) shows
    it, once per kind of failure. Prefect's other errors in the task run (a failed commit of
    its result) keep their traceback: nothing else tells their cause."""
    return (
        record.name == "prefect.task_runs"
        and getattr(record, "task_name", None) in _QUESTION_TASKS
        and str(record.msg).startswith(_FAILED_STATE)  # not a fault of Prefect's own (a commit)
    )


class TracebackOnce(logging.Filter):
    """On log handlers: the first record carrying an exception shows its traceback (for an
    error a worker process sent back, the one kept where it was raised), later records about
    the same exception (a task's failure, then its flow's) keep only their message; a
    per-question task run's record never does, as its question's failure line does. Shared by
    every handler, as the decision is kept on the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None:
            return True
        if _told_with_its_question(record):
            record.exc_info, record.exc_text = None, None
            return True
        show = getattr(record, _SHOWN, None)
        if show is None:
            show = not traceback_shown(error)
            setattr(record, _SHOWN, show)
            _set(error, _SHOWN, True)
        if not show:
            record.exc_info, record.exc_text = None, None
        elif error.__traceback__ is None and isinstance(getattr(error, _TRACEBACK, None), str):
            # an error sent back by a worker process: the traceback it had there
            record.exc_info, record.exc_text = None, getattr(error, _TRACEBACK)
        return True


def show_tracebacks_once(handlers: list[logging.Handler]) -> None:
    """Add TracebackOnce to each handler that has none (first, before any formatting)."""
    for handler in handlers:
        if not any(isinstance(f, TracebackOnce) for f in handler.filters):
            handler.filters.insert(0, TracebackOnce())


# Tasks the flow calls itself rather than per question (tasks/benchmark.py): their failure
# stops the run, and the command tells it once at the end.
_RUN_TASKS = frozenset({"prepare-questions", "locate-memories", "write-results"})


class ToldByTheCommand(logging.Filter):
    """On the terminal's log handlers of `lme-bench run`: leaves out what the command prints
    once when the run ends (a run-stopping error with one traceback, or its failures grouped):
    the flow run's exception and Failed state, and the Failed state of a task the flow calls
    itself (Prefect's records of them reach its API all the same)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "prefect.flow_runs":
            return not (record.exc_info or str(record.msg).startswith(_FAILED_STATE))
        if record.name == "prefect.task_runs" and record.levelno >= logging.ERROR:
            run_task = getattr(record, "task_name", None) in _RUN_TASKS
            return not (run_task and str(record.msg).startswith(_FAILED_STATE))
        return True


def tell_at_the_end(handlers: list[logging.Handler]) -> None:
    """Add ToldByTheCommand first to each handler that has none."""
    for handler in handlers:
        if not any(isinstance(f, ToldByTheCommand) for f in handler.filters):
            handler.filters.insert(0, ToldByTheCommand())


def short_traceback(error: BaseException) -> str:
    """The error's traceback through lme-bench's and the user's code (no Prefect, library or
    standard-library frames but the innermost, where it was raised), secrets masked; the
    error line (`error_text`) names the innermost frame outside the harness. Without frames,
    the traceback kept where it was caught (a batch worker's)."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return traceback_text(error) or ""
    kept = [f for f in frames[:-1] if not _is_library(f.filename)] + [frames[-1]]
    lines = traceback.StackSummary.from_list(kept).format()
    return redact_secrets("Traceback (most recent call last):\n" + "".join(lines).rstrip())


def _is_library(filename: str) -> bool:
    """An installed library's or the standard library's file (not lme-bench's, not the user's)."""
    if filename.startswith("<"):
        return True
    path = str(Path(filename).resolve())
    if path.startswith(_HARNESS):
        return False
    return path.startswith(_LIBRARIES) or "site-packages" in path or "dist-packages" in path
