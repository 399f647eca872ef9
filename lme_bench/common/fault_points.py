"""A deterministic process exit for fault-injection tests and benchmarks: with
`LME_FAULT_EXIT=ingest:<question id>:<session index>` in its environment, a process ends at
once (exit status 70, no cleanup, as a killed worker would) right after that session of that
question's ingestion was written, before the session is marked done. Unset, nothing happens."""

from __future__ import annotations

import os

FAULT_ENV = "LME_FAULT_EXIT"
EXIT_STATUS = 70


def exit_point(stage: str, question_id: str, index: int) -> None:
    """End the process here when the environment names this point."""
    wanted = os.environ.get(FAULT_ENV)
    if wanted and wanted == f"{stage}:{question_id}:{index}":
        os._exit(EXIT_STATUS)
