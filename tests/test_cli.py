"""`lme-bench` as a user runs it: real processes, exit codes, messages, files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import make_question

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lme_bench.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
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
    tmp_path: Path, content: str, words: str
) -> None:
    data = tmp_path / "bad.json"
    data.write_text(content)
    results = tmp_path / "results"
    done = _cli(
        "run", "configs/default.toml", "--dataset", str(data), "--results-dir", str(results)
    )
    assert done.returncode == 2
    message = done.stderr.strip()
    assert message.startswith("lme-bench: error: ") and str(data) in message and words in message
    assert "Traceback" not in done.stderr
    assert not results.exists()


def test_unknown_question_id_and_bad_config(tmp_path: Path) -> None:
    done = _cli(
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
    done = _cli("run", str(config), "--results-dir", str(tmp_path / "r"))
    assert done.returncode == 2 and f"{config}" in done.stderr and "memory.backend" in done.stderr
    assert not (tmp_path / "r" / "sample").exists()


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
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "## Retrieval, session granularity" in done.stdout
    assert "3 questions" in done.stdout
    assert (tmp_path / "cli" / "retrieval.parquet").is_file()
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert len(manifest["question_ids"]) == 3


def test_generate_writes_a_loadable_file(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    done = _cli("generate", "--scale", "s", "--questions", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "2 questions" in done.stdout
    assert len(json.loads(out.read_text())) == 2
