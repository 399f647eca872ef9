"""The flow on a LoCoMo file (a sample written for the tests): each conversation is ingested
once, every question answered from its memory with the stand-in reader and judged by the
stand-in judge, and the report holds LoCoMo's own figures, the LLM judge's accuracy beside them
(labelled as not official) and the official-format predictions."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.report.run_report import headline
from lme_bench.run.request import RunRequest
from tests.benchmarks.locomo.samples import listed_sample, write_json

pytestmark = pytest.mark.slow  # runs the whole flow


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_a_locomo_run_ingests_each_conversation_once_and_reports_f1(
    harness: None, tmp_path: Path
) -> None:
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    config = tmp_path / "fake.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\n'
        '[models]\nqa = "fake:quote-memory"\njudge = "fake:match-judge"\n'
    )
    request = RunRequest(
        config=str(config), dataset=str(data), results_dir=str(tmp_path), run_id="locomo"
    )
    benchmark(request)
    run_dir = tmp_path / "locomo"
    answers = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    assert len(answers) == 10 and all(a["status"] == "ok" for a in answers)
    retrieval = pq.read_table(run_dir / "retrieval.parquet").to_pylist()
    assert len(retrieval) == 20 and {r["status"] for r in retrieval} == {"ok"}
    db = sqlite3.connect(tmp_path / "memory.sqlite")
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 2  # one per conversation
    assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == 8  # 4 turns each
    summary = json.loads((run_dir / "summary.json").read_text())
    locomo = summary["locomo"]
    assert locomo["questions"] == 10 and locomo["overall_f1"] is not None
    assert set(locomo["categories"]) == {
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    }
    markdown = (run_dir / "summary.md").read_text()
    assert "## LoCoMo" in markdown
    # an LLM judge's verdict per question, beside F1 and labelled as not the official metric
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    verdicts = {
        s["question_id"]: s for s in scores if s["judge"] == "fake:match-judge" and not s["repeat"]
    }
    assert len(verdicts) == 10 and all(v["label"] is not None for v in verdicts.values())
    prompts = {(v["question_type"], v["prompt_name"]) for v in verdicts.values()}
    assert prompts == {
        ("multi-hop", "default"),
        ("temporal", "default"),
        ("open-domain", "default"),
        ("single-hop", "default"),
        ("adversarial", "abstention"),
    }
    judged = locomo["llm_judge"]
    assert judged["label"] == "LLM judge, not the official LoCoMo metric"
    assert judged["judge"] == "fake:match-judge" and judged["prompt_source"] == "lme-bench"
    correct = sum(bool(v["label"]) for v in verdicts.values())
    assert judged["overall"]["correct"] == correct and judged["overall"]["n"] == 10
    for category, row in judged["categories"].items():
        mine = [v["label"] for v in verdicts.values() if v["question_type"] == category]
        assert (row["correct"], row["n"]) == (sum(mine), len(mine))
    shown = f"{100 * correct / 10:.1f}% ({correct}/10)"
    section = markdown.split("## LoCoMo", 1)[1].splitlines()
    overall_line = next(line for line in section if line.startswith("| overall |"))
    assert overall_line.endswith(f"| {shown} |")
    assert "LLM judge accuracy (not official)" in markdown
    assert "No LLM judge scores LoCoMo questions" not in markdown
    assert "| task-averaged |" in markdown and "of 6 types" not in markdown  # five categories
    line = headline(summary)  # the run's last line: F1 leads as the official figure
    assert line.startswith(f"LoCoMo F1 {locomo['overall_f1']:.3f} (official metric); ")
    assert f"LLM-judge accuracy {shown[:-1]}; not the official LoCoMo metric)" in line
    html = (run_dir / "report.html").read_text()
    assert "<h2>LoCoMo</h2>" in html and "F1 (official)" in html
    exported = json.loads((run_dir / "locomo_predictions.json").read_text())
    assert [s["sample_id"] for s in exported] == ["conv-7", "conv-8"]
    assert all("prediction" in item for s in exported for item in s["qa"])
    for number, sample in zip((7, 8), exported, strict=True):  # the file LoCoMo's scorer opens
        assert json.loads((run_dir / "locomo" / f"{number}.json").read_text()) == sample
    assert not list(run_dir.glob("hypotheses.jsonl*"))  # LongMemEval's formats are not LoCoMo's
    # the adversarial questions are the accuracy tables' abstention row
    abstention = summary["qa"]["judges"]["fake:match-judge"]["abstention"]
    assert abstention["n"] == 2 == locomo["categories"]["adversarial"]["count"]
    assert f"| abstention | {100 * abstention['correct'] / 2:.1f}% | " in markdown
    for note in ("six types", "`_abs`", "print_retrieval_metrics.py", "print_qa_metrics"):
        assert note not in markdown and note not in html
