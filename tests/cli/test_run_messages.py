"""What `lme-bench run` prints, as a user sees it in a real process: an error that stops a run
told once, failures grouped by cause, model calls counted as made."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.runs import cli_env

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # real runs, each with its temporary Prefect server


def _run(tmp_path: Path, config: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", str(config),
         "--results-dir", str(tmp_path / "results"), *options],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=cli_env(tmp_path / "prefect", PREFECT_LOGGING_LEVEL="INFO"),
    )  # fmt: skip


def test_model_calls_count_the_calls_made_not_the_cached_results(tmp_path: Path) -> None:
    options = ("--limit", "3", "--run-id", "again")
    first = _run(tmp_path, ROOT / "configs/full-fake.toml", *options)
    assert first.returncode == 0, first.stderr[-3000:]
    made = re.findall(r"3/3 questions \| [^|]+ \| (\d+) model calls", first.stderr)
    assert made and int(made[-1]) > 0, first.stderr[-3000:]
    second = _run(tmp_path, ROOT / "configs/full-fake.toml", *options)  # all from the cache
    assert second.returncode == 0, second.stderr[-3000:]
    final = (
        f"3/3 questions | ingest 3 retrieval 3 answer 3 judge 3 | 0 model calls ({made[-1]} more"
    )
    assert final in second.stderr, second.stderr[-3000:]


BOOM = """
from docs.example_backend import SessionNotes


class Boom(SessionNotes):
    name = "boom"

    def __init__(self, params, env):
        raise RuntimeError("the memory server said no")
"""


def test_an_error_that_stops_the_run_is_printed_once_with_one_short_traceback(
    tmp_path: Path,
) -> None:
    (tmp_path / "boom_backend.py").write_text(BOOM)
    config = tmp_path / "boom.toml"
    config.write_text(f'[memory]\nbackend = "{tmp_path / "boom_backend.py"}:Boom"\n')
    done = _run(tmp_path, config, "--limit", "2", "--run-id", "boom")
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed[-3000:]
    assert printed.count("the memory server said no") == 2, printed[-3000:]  # source, message
    assert printed.count("RuntimeError: the memory server said no") == 1
    assert printed.count("Traceback (most recent call last)") == 1
    assert "prefect" not in printed.split("Traceback (most recent call last)")[1]
    lines = done.stderr.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("lme-bench: error:")]
    assert lines[at - 1].endswith('raise RuntimeError("the memory server said no")')
    assert lines[at] == (
        "lme-bench: error: RuntimeError: the memory server said no (at boom_backend.py:9 in "
        "__init__)"
    )


def _refusing_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_failures_are_grouped_by_stage_and_cause_and_the_ids_left_out_counted(
    tmp_path: Path,
) -> None:
    url = _refusing_url()
    config = tmp_path / "refused.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\n'
        f'[providers.local]\nkind = "openai-compatible"\nbase_url = "{url}"\n'
        '[models]\nqa = "local:tiny"\njudge = "fake:match-judge"\nretry_attempts = 1\n'
    )
    done = _run(tmp_path, config, "--limit", "24", "--run-id", "refused")
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed[-3000:]
    cause = f"OpenAIConnectionError: Connection error. (reader local:tiny at {url})"
    assert (
        f"lme-bench: 24 question(s) failed: answer \N{MULTIPLICATION SIGN} 24: {cause}; ids: "
        in (done.stderr)
    )
    assert "and 4 more (manifest.json's failed_question_ids lists them all)" in done.stderr
    assert printed.count("question(s) failed") == 1, printed[-3000:]  # not from Prefect too
    assert "Traceback" not in printed


# Loaded by every Python process of the run (the temporary Prefect server's too): the server
# prints a traceback while it shuts down, as one cancelled in a database query does.
SHUTDOWN_NOISE = """
import sys

try:
    from uvicorn.server import Server
except ImportError:
    Server = None

if Server is not None:
    _shutdown = Server.shutdown

    async def shutdown(self, *args, **kwargs):
        print("Traceback (most recent call last):\\n  sqlalchemy ... asyncio.exceptions."
              "CancelledError", file=sys.stderr, flush=True)
        return await _shutdown(self, *args, **kwargs)

    Server.shutdown = shutdown
"""


def test_no_traceback_follows_a_completed_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SHUTDOWN_NOISE)
    done = subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", "configs/full-fake.toml",
         "--limit", "1", "--run-id", "quiet", "--results-dir", str(tmp_path / "results")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=cli_env(tmp_path / "prefect", PYTHONPATH=f"{ROOT}:{site}"),
    )  # fmt: skip
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed[-3000:]
    assert "Traceback" not in printed and "CancelledError" not in printed, printed[-3000:]
    kept = (tmp_path / "prefect" / "temporary-server-shutdown.log").read_text()
    assert "asyncio.exceptions.CancelledError" in kept  # written down, not lost
