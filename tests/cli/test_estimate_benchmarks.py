"""`lme-bench estimate` on a file of a benchmark whose questions share builds (a LoCoMo file):
it is split as a run splits it, each conversation's ingestion counted once and each question's
answer counted."""

from __future__ import annotations

from pathlib import Path

import pytest
from lme_bench_flows.command import main

from lme_bench.config.settings import load_settings
from lme_bench.run.estimate import estimate_run
from lme_bench.run.steps import plan_run, prepare_questions
from tests.benchmarks.locomo.samples import listed_sample, write_json


def test_a_locomo_file_counts_each_build_once_and_every_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    monkeypatch.setenv("LME_RUN__RESULTS_DIR", str(tmp_path))  # where the dataset split goes
    monkeypatch.setenv("LME_MODELS__QA", "fake:quote-memory")
    monkeypatch.setenv("LME_MODELS__JUDGE", "none")  # judging is counted elsewhere
    argv = ["estimate", "configs/agentic-fake.toml", "--dataset", str(data), "--latency", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Estimate for 10 questions (2 memory builds) at 1 s a call:" in out

    settings = load_settings(
        Path("configs/agentic-fake.toml"),
        **{
            "run.results_dir": str(tmp_path),
            "dataset.path": str(data),
            "models.qa": "fake:quote-memory",
            "models.judge": "none",
        },
    )
    _, refs = prepare_questions(plan_run(settings))
    one_build = [r for r in refs if r.build == refs[0].build]
    found = estimate_run([r.load() for r in refs], settings, 1, [r.build for r in refs])
    alone = estimate_run([r.load() for r in one_build], settings, 1, [r.build for r in one_build])
    ingest, answer = found.stages[0], found.stages[1]
    assert ingest.calls == 2 * alone.stages[0].calls  # two conversations, each ingested once
    assert answer.calls == 10 == 2 * alone.stages[1].calls  # every question answered
    assert f"| ingest | fake:note-taker | {ingest.calls:,} |" in out
