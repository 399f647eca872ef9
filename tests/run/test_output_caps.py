"""Every model request carries an output cap, per role; replies the cap cut short are counted
per row and in the summary."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.config.settings import ConfigError, load_settings
from lme_bench.run.finish import RunResults, write_run
from lme_bench.run.steps import (
    answer_question,
    evaluate_question,
    ingest_question,
    judge_question,
    plan_run,
    prepare_questions,
)


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "caps.toml"
    path.write_text(text)
    return path


def test_caps_per_role_one_number_for_all_and_bad_values(tmp_path: Path) -> None:
    caps = load_settings(None).models.max_tokens
    assert (caps.agent, caps.qa, caps.memory, caps.for_role("judge")) == (2048, 1024, 4096, None)
    one = load_settings(_toml(tmp_path, "[models]\nmax_tokens = 300\n")).models.max_tokens
    assert (one.agent, one.qa, one.memory) == (300, 300, 300)
    table = load_settings(_toml(tmp_path, "[models.max_tokens]\nqa = 64\n")).models.max_tokens
    assert (table.agent, table.qa) == (2048, 64)
    with pytest.raises(ConfigError, match=r"models\.max_tokens\.judge"):
        load_settings(_toml(tmp_path, "[models.max_tokens]\njudge = 64\n"))
    with pytest.raises(ConfigError, match=r"models\.max_tokens\.qa"):
        load_settings(_toml(tmp_path, "[models.max_tokens]\nqa = 0\n"))


def test_replies_cut_by_the_cap_are_counted_in_rows_and_summary(tmp_path: Path) -> None:
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path), "models.max_tokens": {"qa": 16}},
    )
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan, limit=8)
    results = RunResults()
    results.outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    results.retrieval = [
        row
        for r, o in zip(refs, results.outcomes, strict=True)
        for row in asyncio.run(evaluate_question(r, o, settings))
    ]
    results.hypotheses = [
        asyncio.run(answer_question(r, o.memory_id, settings))
        for r, o in zip(refs, results.outcomes, strict=True)
    ]
    results.scores = [
        s
        for r, h in zip(refs, results.hypotheses, strict=True)
        for s in asyncio.run(judge_question(r, h, settings))
    ]
    write_run(plan, settings, prepared, refs, results, datetime.now(UTC))

    rows = pq.read_table(plan.run_dir / "hypotheses.parquet").to_pylist()
    capped = [r for r in rows if r["capped_replies"]]
    long_answers = [r for r in rows if len((r["hypothesis"] or "").split()) == 16]
    assert capped and {r["question_id"] for r in capped} == {r["question_id"] for r in long_answers}
    answers = json.loads((plan.run_dir / "summary.json").read_text())["qa"]["answers"]
    assert answers["capped_replies"] == len(capped) and answers["timeouts"] == 0
    summary = (plan.run_dir / "summary.md").read_text()
    assert f"{len(capped)} replies cut by the output cap" in summary
