"""The flow on BEAM chats (a sample written for the tests): each chat is ingested once, every
question answered, judged rubric item by rubric item with the scripted fake judge and BEAM's
prompts read from a stand-in checkout, and the report's BEAM figures are those the scores give
when averaged as BEAM's report_results.py averages them."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.benchmarks.beam.samples import QUESTIONS, write_chat, write_checkout, write_questions

pytestmark = pytest.mark.slow  # runs the whole flow


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def test_a_beam_run_reports_the_rubric_scores_per_ability(harness: None, tmp_path: Path) -> None:
    data = tmp_path / "data"
    for number in (3, 4):
        write_chat(data, number=number)
        write_questions(data, number=number)
    checkout = write_checkout(tmp_path)
    config = tmp_path / "fake.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\n'
        '[models]\nqa = "fake:quote-memory"\njudge = "fake:rubric-judge"\n'
        f'[judge]\nbeam_repo = "{checkout}"\n'
    )
    request = RunRequest(
        config=str(config), dataset=str(data / "chats"), results_dir=str(tmp_path), run_id="beam"
    )
    benchmark(request)
    run_dir = tmp_path / "beam"
    questions = 2 * sum(len(v) for v in QUESTIONS.values())
    answers = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    assert len(answers) == questions and all(a["status"] == "ok" for a in answers)
    db = sqlite3.connect(tmp_path / "memory.sqlite")
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 2  # one per chat
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    assert len(scores) == questions  # one LLM judge, one repeat, no fallback rows
    assert all(s["label"] is None and 0 <= s["score"] <= 1 for s in scores)
    # BEAM's averaging: per chat and ability the mean, per ability the mean over chats
    per_chat: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in scores:
        chat = row["question_id"].split(":")[0]
        per_chat[(row["question_type"], chat)].append(row["score"])
    by_ability: dict[str, list[float]] = defaultdict(list)
    for (ability, _), values in per_chat.items():
        by_ability[ability].append(_mean(values))
    expected = {ability: _mean(means) for ability, means in by_ability.items()}
    summary = json.loads((run_dir / "summary.json").read_text())
    beam = summary["beam"]["judges"]["fake:rubric-judge"]
    assert beam["questions"] == beam["judged"] == questions and beam["failed"] == 0
    assert {a: r["score"] for a, r in beam["abilities"].items()} == pytest.approx(expected)
    assert beam["mean_over_abilities"] == pytest.approx(_mean(list(expected.values())))
    assert summary["qa"]["judges"] == {}  # no yes/no verdicts: BEAM rows are not accuracy
    markdown = (run_dir / "summary.md").read_text()
    assert "## BEAM" in markdown
    mean = beam["mean_over_abilities"]
    assert f"| mean over abilities | {questions} | {questions} | {mean:.3f} |" in markdown
    html = (run_dir / "report.html").read_text()
    assert "<h2>BEAM</h2>" in html and "<td>mean over abilities</td>" in html
    exported = json.loads((run_dir / "beam/100K/3/results-lme-bench.json").read_text())
    assert {a: len(v) for a, v in exported.items()} == {a: len(v) for a, v in QUESTIONS.items()}
    assert exported["information_extraction"][0]["question"] == "Which herb did I start with?"
    evaluation = json.loads((run_dir / "beam/100K/3/evaluation-results-lme-bench.json").read_text())
    assert set(evaluation) == set(QUESTIONS) and "tau_norm" in evaluation["event_ordering"][0]
    assert not list(run_dir.glob("hypotheses.jsonl*"))  # LongMemEval's formats are not BEAM's
    # no LongMemEval notes: no accuracy table to explain, no `_abs` ids, no official printer
    assert "## Question answering" in markdown and "### LLM judge" not in markdown
    for note in ("six types", "_abs", "print_retrieval_metrics.py", "print_qa_metrics"):
        assert note not in markdown and note not in html
