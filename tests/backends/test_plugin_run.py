"""A whole benchmark run on a backend plugged in from one file: `lme-bench run` as a user runs
it, the backend named by its path, parameters checked, figures labelled by provenance, and no
gold label in anything the backend was handed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.backends.registry import storage_key
from lme_bench.dataset.loader import iter_questions
from lme_bench.run.steps import bundled_sample
from tests.backends.recording_backend import RecordingNotes
from tests.cli.in_process import run_command

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[memory]
backend = "{backend}"
params = {params}

[models]
qa = "fake:quote-memory"
judge = "fake:match-judge"
"""


def _config(tmp_path: Path, backend: str, params: str) -> Path:
    config = tmp_path / "plugin.toml"
    config.write_text(CONFIG.format(backend=backend, params=params))
    return config


def _run(tmp_path: Path, backend: str, params: str, *args: str) -> subprocess.CompletedProcess[str]:
    config = _config(tmp_path, backend, params)
    return subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", str(config), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.slow
def test_a_one_file_backend_runs_the_benchmark_and_is_scored_by_provenance(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    done = _run(
        tmp_path,
        "tests/backends/recording_backend.py:RecordingNotes",
        "{ min_word = 3 }",
        "--results-dir",
        str(results),
        "--run-id",
        "plugin",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pq.read_table(results / "plugin" / "retrieval.parquet").to_pylist()
    assert len(rows) == 68
    by_granularity = {g: [r for r in rows if r["granularity"] == g] for g in ("session", "turn")}
    assert all(r["status"] == "ok" for r in by_granularity["session"])
    # A note holding a whole session shares too few of its words with any one turn to map to
    # it: turn granularity is not applicable, with the reason, rather than scored 0.
    assert {(r["status"], r["reason"]) for r in by_granularity["turn"]} == {
        ("not-applicable", "no hit's text matches a user turn of the haystack")
    }
    assert {r["provenance"] for r in by_granularity["session"]} == {"exact"}
    assert {r["provenance"] for r in by_granularity["turn"]} == {"attributed"}
    assert all(r["requested_depth"] == 1000 and r["depth"] <= 60 for r in rows)
    assert any(r["recall_any@5"] for r in by_granularity["session"])
    summary = (results / "plugin" / "summary.md").read_text()
    assert "Provenance: attributed" in summary
    hypotheses = pq.read_table(results / "plugin" / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == 34 and all(h["status"] == "ok" for h in hypotheses)

    calls = [
        json.loads(line)
        for line in (results / "backends" / storage_key(RecordingNotes))
        .joinpath("calls.jsonl")
        .read_text()
        .splitlines()
    ]
    assert {c["call"] for c in calls} == {"open_memory", "ingest_session", "search"}
    handed = json.dumps(calls)
    instances = [q.instance for q in iter_questions(bundled_sample())]
    haystack = "\n".join(t.content for i in instances for s in i.haystack_sessions for t in s)
    assert "has_answer" not in handed and "_abs" not in handed and "answer_" not in handed
    for instance in instances:
        assert instance.question_id not in handed
        for session_id in instance.haystack_session_ids:
            assert f'"{session_id}"' not in handed
        if instance.answer not in haystack:
            assert instance.answer not in handed, instance.question_id


def test_bad_backend_params_are_one_error_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(backend: str, params: str) -> subprocess.CompletedProcess[str]:
        config = _config(tmp_path, backend, params)
        return run_command(capsys, monkeypatch, "run", str(config))

    done = run("docs/example_backend.py:SessionNotes", "{ min_wrd = 3 }")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "[memory.params] min_wrd" in done.stderr and "Traceback" not in done.stderr
    done = run("docs/example_backend.py:Nothing", "{}")
    assert done.returncode == 2 and "has no class 'Nothing'" in done.stderr
