"""`lme-bench ARGS` run in the test's own process: the installed command's `main` (its flow
loader too), from the repository root, with what it printed and its exit code as a finished
process's. A subprocess adds only an interpreter start and Prefect's import to a command that
stops on bad input; tests about the process itself (signals, exit on kill, a fresh
interpreter's environment) start one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from lme_bench_flows.command import main

ROOT = Path(__file__).resolve().parents[2]


def run_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> subprocess.CompletedProcess[str]:
    monkeypatch.chdir(ROOT)
    capsys.readouterr()  # only what the command prints
    before = dict(os.environ)  # what a run sets for its temporary server stays in that run
    try:
        code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(before)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["lme-bench", *args], code, out, err)
