"""Answer and judge stages end to end: every file, official exports re-scored independently,
and the real OpenAI path over HTTP to a loopback fake provider."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.config.settings import ProviderSettings, Settings, load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.judge.panel import judge_panel
from lme_bench.run.finish import RunResults, write_run
from lme_bench.run.steps import (
    answer_question,
    bundled_sample,
    evaluate_question,
    ingest_question,
    judge_question,
    plan_run,
    prepare_questions,
    qa_panel,
)
from tests.judge.standin_checkout import expected_prompt, make_checkout
from tests.providers.fake_openai_server import serve


def _run(settings: Settings, limit: int) -> tuple[Path, dict[str, Any]]:
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan, limit=limit)
    results = RunResults()
    results.outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    results.retrieval = [
        row
        for r, o in zip(refs, results.outcomes, strict=True)
        for row in asyncio.run(evaluate_question(r, o, settings))
    ]
    results.hypotheses = [
        asyncio.run(answer_question(r, o.memory_id, qa_panel(settings)))
        for r, o in zip(refs, results.outcomes, strict=True)
    ]
    results.scores = [
        s
        for r, h in zip(refs, results.hypotheses, strict=True)
        for s in asyncio.run(judge_question(r, h, judge_panel(settings)))
    ]
    report = write_run(plan, settings, prepared, refs, results, datetime.now(UTC))
    return plan.run_dir, report.summary


def _rescore(eval_results: Path) -> dict[str, tuple[int, int]]:
    """Independent re-scoring of an official eval-results file: per type (correct, judged)."""
    types = {
        q.instance.question_id: q.instance.question_type for q in iter_questions(bundled_sample())
    }
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line in eval_results.read_text().splitlines():
        item = json.loads(line)
        counts[types[item["question_id"]]][0] += int(item["autoeval_label"]["label"])
        counts[types[item["question_id"]]][1] += 1
    return {t: (c, n) for t, (c, n) in counts.items()}


def test_fake_models_produce_every_file_and_exports_match_the_summary(tmp_path: Path) -> None:
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path), "judge.repeats": 2, "judge.second_model": "fake:yes"},
    )
    run_dir, summary = _run(settings, limit=12)
    for name in (
        "retrieval.parquet",
        "ingest.parquet",
        "hypotheses.parquet",
        "scores.parquet",
        "summary.md",
        "summary.json",
        "manifest.json",
        "hypotheses.jsonl",
        "hypotheses.jsonl.eval-results-match-judge",
        "hypotheses.jsonl.eval-results-yes",
    ):
        assert (run_dir / name).is_file(), name
    judge = summary["qa"]["judges"]["fake:match-judge"]
    rescored = _rescore(run_dir / "hypotheses.jsonl.eval-results-match-judge")
    for question_type, (correct, judged) in rescored.items():
        assert (
            judge["per_type"][question_type]["correct"],
            judge["per_type"][question_type]["n"],
        ) == (correct, judged)
    assert judge["repeat_agreement"] == 1.0  # a deterministic judge agrees with itself
    assert summary["qa"]["judges"]["fallback:normalized-match"]["kind"] == "fallback"
    (pair,) = summary["qa"]["agreement"]
    assert pair["judges"] == ["fake:match-judge", "fake:yes"] and pair["n"] > 0
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    assert {s["repeat"] for s in scores if s["judge"] == "fake:match-judge"} == {0, 1}
    assert all(len(s["prompt_sha256"]) == 64 for s in scores if s["judge_kind"] == "llm")
    assert {s["attribution"] for s in scores} <= {
        "correct",
        "retrieved-not-answered",
        "evidence-not-retrieved",
        "answered-wrong",
        "not-gradable",  # the fallback on preference rubrics
    }
    assert all(s["readable"] for s in scores if s["judge_kind"] == "llm")
    lines = (run_dir / "hypotheses.jsonl").read_text().splitlines()
    assert set(json.loads(lines[0])) == {"question_id", "hypothesis"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["prompts"]["judge"]["version"] == "lme-bench-judge-v2"
    assert "not the official text" in manifest["prompts"]["judge"]["description"]
    assert "not the official text" in (run_dir / "summary.md").read_text()
    assert manifest["models"]["qa"] == "fake:quote-memory"


def _openai_like(body: dict[str, Any]) -> dict[str, Any]:
    text = body["messages"][-1]["content"]
    if body["model"] in ("judge", "gpt-4o-2024-08-06"):
        said = text.split("r=" if "STANDIN" in text else "Model response:")[-1]
        return {"content": "Yes." if "Max" in said else "No."}
    return {"content": "Your dog is Max."}


def _http_settings(tmp_path: Path, url: str, judge: str, **overrides: Any) -> Settings:
    settings = load_settings(
        None, **{"run.results_dir": str(tmp_path), "run.id": "http"} | overrides
    )
    return settings.model_copy(
        update={
            "models": settings.models.model_copy(update={"qa": "local:reader", "judge": judge}),
            "providers": {"local": ProviderSettings(base_url=url, api_key_env="QA_KEY")},
        }
    )


OFFICIAL_FIELDS = {"model", "messages", "n", "temperature", "max_tokens"}


def test_answer_and_judge_over_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_KEY", "sk-qa-canary")
    with serve([_openai_like]) as (url, fake):
        run_dir, summary = _run(_http_settings(tmp_path, url, "local:judge"), limit=3)
    hypotheses = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    assert [h["hypothesis"] for h in hypotheses] == ["Your dog is Max."] * 3
    assert all(h["llm_calls"] == 1 and h["input_tokens"] == 11 for h in hypotheses)
    judge_bodies = [b for b in fake.requests if b["model"] == "judge"]
    assert len(judge_bodies) == 3
    for body in judge_bodies:  # the official request, field for field
        assert set(body) == OFFICIAL_FIELDS
        assert (body["n"], body["temperature"], body["max_tokens"]) == (1, 0, 10)
        assert isinstance(body["temperature"], int)
        (message,) = body["messages"]
        assert message["role"] == "user" and set(message) == {"role", "content"}
    judge = summary["qa"]["judges"]["local:judge"]
    assert judge["overall"]["correct"] == 3 and judge["prompts"]["source"] == "lme-bench"
    everything = json.dumps(fake.requests) + (run_dir / "manifest.json").read_text()
    assert "sk-qa-canary" not in everything


def test_official_prompts_and_file_names_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With [judge] official_repo, every judge request is the official script's, body for body:
    the prompt its get_anscheck_prompt builds, in the official request shape."""
    monkeypatch.setenv("QA_KEY", "sk-qa-canary")
    checkout = make_checkout(tmp_path / "LongMemEval")
    sample = {q.instance.question_id: q.instance for q in iter_questions(bundled_sample())}
    with serve([_openai_like]) as (url, fake):
        settings = _http_settings(
            tmp_path, url, "local:gpt-4o-2024-08-06", **{"judge.official_repo": str(checkout)}
        )
        run_dir, summary = _run(settings, limit=4)
    hypotheses = {
        json.loads(line)["question_id"]: json.loads(line)["hypothesis"]
        for line in (run_dir / "hypotheses.jsonl").read_text().splitlines()
    }
    bodies = [b for b in fake.requests if b["model"] == "gpt-4o-2024-08-06"]
    expected = [
        {
            "model": "gpt-4o-2024-08-06",
            "messages": [
                {
                    "role": "user",
                    "content": expected_prompt(
                        sample[q].question_type,
                        sample[q].question,
                        sample[q].answer,
                        hypothesis,
                        "_abs" in q,
                    ),
                }
            ],
            "n": 1,
            "temperature": 0,
            "max_tokens": 10,
        }
        for q, hypothesis in hypotheses.items()
    ]
    assert sorted(bodies, key=json.dumps) == sorted(expected, key=json.dumps)
    judge = summary["qa"]["judges"]["local:gpt-4o-2024-08-06"]
    assert judge["prompt_version"] == "official" and judge["prompts"]["source"] == "official"
    script = checkout / "src" / "evaluation" / "evaluate_qa.py"
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    assert judge["prompts"]["script_sha256"] == digest
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    assert {s["prompt_version"] for s in scores if s["judge_kind"] == "llm"} == {"official"}
    assert "STANDIN" not in json.dumps(scores)  # hashes only, never the official text
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["prompts"]["judge"]["script_sha256"] == digest
    # The official script names its result file after the short model name.
    lines = (run_dir / "hypotheses.jsonl.eval-results-gpt-4o").read_text().splitlines()
    assert len(lines) == 4
    assert {json.loads(x)["autoeval_label"]["model"] for x in lines} == {"gpt-4o-2024-08-06"}
