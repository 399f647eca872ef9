"""docs/example_benchmark.py, a one-file benchmark with a scoring rule of its own (multiple
choice, scored exactly), runs through `lme-bench run` with the fake models: its rule gives the
verdicts (no model judges), and its own figures and answers file are in the run folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.benchmarks import registry
from lme_bench.benchmarks.scoring_hooks import scoring_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "example_benchmark.py"
DATA = ROOT / "tests" / "benchmarks" / "data" / "pantry.choices.json"
CONFIG = """
[dataset]
benchmark = "{example}:Choices"

[models]
qa = "fake:quote-memory"
judge = "none"
"""


def test_its_hooks_are_found_through_the_config_that_names_it() -> None:
    configured = f"{EXAMPLE}:Choices"
    benchmark = registry.load_benchmark(configured)
    scoring = scoring_of(benchmark.name, configured)
    assert scoring.score_answer is not None and scoring.run_figures is not None
    assert scoring.own_judge is None and scoring_of(benchmark.name).score_answer is None
    (question, gold), _ = list(benchmark.questions(DATA))
    record = type("Record", (), {"question": question.question, "answer": gold.answers[0]})
    assert scoring.score_answer(record, "(B) coffee")
    assert not scoring.score_answer(record, "I drink tea")


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_no_core_module_names_it() -> None:
    """Its report hooks are found from the run's record of where the class is, not by name."""
    core = [*(ROOT / "lme_bench").rglob("*.py"), *(ROOT / "flows").rglob("*.py")]
    naming = [p for p in core if re.search(r"example_benchmark|choices_answers", p.read_text())]
    assert naming == []


@pytest.mark.slow  # runs the whole flow, twice
def test_a_run_of_it_is_scored_by_its_own_rule(tmp_path: Path) -> None:
    config = tmp_path / "choices.toml"
    config.write_text(CONFIG.format(example=EXAMPLE))
    results = tmp_path / "results"
    for run_id in ("mc", "mc2"):
        where = ["--dataset", str(DATA), "--results-dir", str(results), "--run-id", run_id]
        done = _command("run", str(config), *where)
        assert done.returncode == 0, done.stderr[-3000:]
    run = results / "mc"
    scores = pq.read_table(run / "scores.parquet").to_pylist()
    assert {(s["judge"], s["judge_kind"], s["llm_calls"]) for s in scores} == {
        ("rule:choices", "rule", 0)
    }
    labels = {s["question_id"]: s["label"] for s in scores}
    # the fake reader quotes the memory: the coffee turn (right), the Lisbon turn (B is Porto)
    assert labels == {"c1-q1": True, "c1-q2": False}
    summary = json.loads((run / "summary.json").read_text())
    assert summary["benchmark"] == "choices"
    assert summary["choices"] == {
        "questions": 2,
        "correct": 1,
        "accuracy": 0.5,
        "by_type": {
            "preference": {"questions": 1, "correct": 1, "accuracy": 1.0},
            "fact": {"questions": 1, "correct": 0, "accuracy": 0.0},
        },
        "answers": "choices_answers.jsonl",
    }
    assert summary["qa"]["judges"]["rule:choices"]["overall"]["correct"] == 1
    lines = (run / "choices_answers.jsonl").read_text().splitlines()
    assert [json.loads(line)["correct"] for line in lines] == [True, False]
    assert summary["benchmark_source"] == f"{EXAMPLE}:Choices"
    assert summary["headline"].startswith("multiple-choice accuracy 50.0% (1/2)")
    markdown = (run / "summary.md").read_text()
    assert "## Multiple choice (exact)" in markdown
    assert "**Headline**: multiple-choice accuracy 50.0% (1/2)" in markdown
    html = (run / "report.html").read_text()
    assert "<h2>Multiple choice (exact)</h2>" in html
    assert (
        '<td>preference</td><td class="n">1</td><td class="n">1</td><td class="n">100.0%</td>'
        in html
    )

    compared = _command("compare", "mc", "mc2", "--results-dir", str(results))
    assert compared.returncode == 0, compared.stderr[-3000:]
    assert "Multiple choice (exact)" in compared.stdout
    assert "Metric: exact match of the chosen option" in compared.stdout
    official = json.loads((results / "compare" / "compare-mc-vs-mc2.json").read_text())["official"]
    assert official["benchmark"] == "choices"
    assert official["rows"]["overall"] == {
        "n": 2,
        "a": 0.5,
        "b": 0.5,
        "delta": 0.0,
        "ci95": [0.0, 0.0],
    }
