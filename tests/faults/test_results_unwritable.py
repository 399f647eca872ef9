"""Running a completed run again when its results folder cannot be written (a full disk, a
read-only folder): one clear error naming the file, no traceback, exit 1, and the earlier
results exactly as they were, with no temporary file left behind."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from lme_bench.results.atomic import ResultsWriteError, write_atomically
from tests.faults.runs import finish, memories, start_run
from tests.faults.server_kill import QUESTIONS, RUN_ID, ServerKilledRun
from tests.faults.unwritable import Preexec, file_size_limit, full_tmpfs, read_only

Refusal = Callable[[Path], AbstractContextManager[tuple[Preexec, str]]]
TABLES = ("retrieval", "ingest", "hypotheses", "scores")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.slow
@pytest.mark.parametrize(
    "refusal",
    [file_size_limit, full_tmpfs, read_only],
    ids=["file-size-limit", "full-tmpfs", "read-only"],
)
def test_unwritable_results_are_one_clear_error_and_keep_the_earlier_results(
    server_killed_run: ServerKilledRun, refusal: Refusal
) -> None:
    run = server_killed_run  # a completed run over MCP; its memory server is still up
    assert run.rerun.code == 0, run.rerun.tail()
    assert {f"{t}.parquet" for t in TABLES} <= set(_files(run.run_dir))

    memories_before = memories(run.server.path)
    with refusal(run.run_dir) as (preexec_fn, reason):
        before = _files(run.run_dir)
        ended = finish(
            start_run(
                run.config,
                run.results,
                RUN_ID,
                run.env(),
                "--limit",
                str(QUESTIONS),
                merge_stderr=False,
                preexec_fn=preexec_fn,
            )
        )
        after = _files(run.run_dir)

    assert ended.code == 1, ended.tail()
    assert "Traceback" not in ended.err
    errors = [line for line in ended.err.splitlines() if line.startswith("lme-bench: ")]
    assert errors == [
        f"lme-bench: error: cannot write {run.run_dir / 'retrieval.parquet'}: {reason}"
    ]
    assert after == before  # nothing replaced, nothing added (no temporary file)
    assert memories(run.server.path) == memories_before


def test_a_failed_write_names_the_target_and_leaves_the_old_file_alone(tmp_path: Path) -> None:
    target = tmp_path / "scores.parquet"
    target.write_bytes(b"earlier results")

    def half_then_full(tmp: Path) -> None:
        tmp.write_bytes(b"half of the new")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(ResultsWriteError) as raised:
        write_atomically(target, half_then_full)
    assert str(raised.value) == f"cannot write {target}: No space left on device"
    assert isinstance(raised.value.__cause__, OSError)
    assert [p.name for p in tmp_path.iterdir()] == ["scores.parquet"]
    assert target.read_bytes() == b"earlier results"
