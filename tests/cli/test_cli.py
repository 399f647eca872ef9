"""`lme-bench` as a user runs it: exit codes, messages, files; real processes for whole runs and
for what a fresh environment decides, the command's `main` in this process for bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.in_process import run_command
from tests.factories import make_question

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('[{"question_id": "x"', "truncated"),
        (json.dumps([make_question(question_type="bogus")]), "field question_type"),
        (json.dumps([make_question(haystack_dates=["2023/05/01 (Mon) 09:15"])]), "length"),
        (json.dumps({"questions": []}), "a JSON object"),
    ],
)
def test_bad_dataset_is_one_clear_error_and_leaves_no_results(
    tmp_path: Path,
    content: str,
    words: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "bad.json"
    data.write_text(content)
    results = tmp_path / "results"
    done = run_command(
        capsys, monkeypatch,
        "run", "configs/default.toml", "--dataset", str(data), "--results-dir", str(results),
    )  # fmt: skip
    assert done.returncode == 2
    message = done.stderr.strip()
    assert message.startswith("lme-bench: error: ") and str(data) in message and words in message
    assert "Traceback" not in done.stderr
    assert not results.exists()


def test_unknown_question_id_and_bad_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_command(
        capsys,
        monkeypatch,
        "run",
        "configs/default.toml",
        "--questions",
        "nope,zzz",
        "--results-dir",
        str(tmp_path / "r"),
    )
    assert done.returncode == 2 and "unknown question id(s): nope, zzz" in done.stderr
    config = tmp_path / "c.toml"
    config.write_text("[memory]\nbackend = 'cloud'\n")
    results = str(tmp_path / "r")
    done = run_command(capsys, monkeypatch, "run", str(config), "--results-dir", results)
    assert done.returncode == 2 and f"{config}" in done.stderr and "memory.backend" in done.stderr
    assert not (tmp_path / "r" / "sample").exists()


@pytest.mark.slow
def test_run_on_a_few_sample_questions(tmp_path: Path) -> None:
    done = _cli(
        "run",
        "configs/default.toml",
        "--limit",
        "3",
        "--run-id",
        "cli",
        "--results-dir",
        str(tmp_path),
        PREFECT_LOGGING_LEVEL="INFO",  # as a user sees it (the tests' default is WARNING)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "## Retrieval, session granularity" in done.stdout
    assert "3 questions" in done.stdout
    assert (tmp_path / "cli" / "retrieval.parquet").is_file()
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert len(manifest["question_ids"]) == 3
    logs = done.stdout + done.stderr
    assert "3/3 questions | ingest 3 retrieval 3 | 0 model calls" in logs  # the progress line
    done_line = (
        r"3 of 3 questions done \(0 failed\) in [\d.]+ m?s wall; search p50 \d+ ms, p95 \d+ ms"
        r" \(waits on lme-bench left out\); session recall_all@5"
    )
    assert re.search(done_line, logs), "the flow's last line gives the run's wall time"
    assert "Task run" not in logs  # no state line per task run without -v
    verbose = _cli("run", "configs/default.toml", "--limit", "1", "--run-id", "v", "-v",
                   "--results-dir", str(tmp_path), PREFECT_LOGGING_LEVEL="INFO")  # fmt: skip
    assert verbose.returncode == 0 and "Task run 'ingest" in verbose.stdout + verbose.stderr


def test_generate_writes_a_loadable_file(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    done = _cli("generate", "--scale", "s", "--questions", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "2 questions" in done.stdout
    assert len(json.loads(out.read_text())) == 2


@pytest.mark.slow
def test_agentic_run_with_the_fake_model_writes_ingest_accounting(tmp_path: Path) -> None:
    done = _cli(
        "run",
        "configs/agentic-fake.toml",
        "--limit",
        "2",
        "--run-id",
        "agent",
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "## Ingestion: agentic (a memory agent writes the memory)" in done.stdout
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "agent" / "ingest.parquet").to_pylist()
    assert rows and all(r["mode"] == "agentic" and r["status"] == "ok" for r in rows)
    assert all(r["llm_calls"] == r["turns"] + 1 for r in rows)
    assert sum(dict(r["memory_calls"]).get("add_entry", 0) for r in rows) > 0


def test_agent_mode_without_a_usable_model_fails_before_any_work(tmp_path: Path) -> None:
    env_config = tmp_path / "c.toml"
    env_config.write_text('[ingest]\nmode = "agentic"\n[models]\nagent = "openai:gpt-4o-mini"\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lme_bench_flows.command",
            "run",
            str(env_config),
            "--results-dir",
            str(tmp_path / "r"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        | {"PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2
    assert "[models] agent = 'openai:gpt-4o-mini': set OPENAI_API_KEY" in done.stderr
    assert not (tmp_path / "r").exists()
