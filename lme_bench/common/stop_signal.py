"""A run that is being stopped (SIGTERM, Ctrl-C): long work checks the flag between steps and
gives up, so the run ends in seconds rather than after every in-flight question finishes.
What was done stays stored and checkpointed; the next run resumes from there."""

from __future__ import annotations

import threading

STOPPING = threading.Event()


class RunStopped(RuntimeError):
    """The run is stopping: this question's work ends here (never retried)."""


def check_stopping() -> None:
    if STOPPING.is_set():
        raise RunStopped("the run is stopping")
