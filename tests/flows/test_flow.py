"""The `benchmark` flow under Prefect's test harness, on the bundled sample."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.benchmark import RunFailures, benchmark
from prefect.client.orchestration import get_client
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run import steps
from lme_bench.run.request import RunRequest

pytestmark = pytest.mark.slow  # every test runs the whole flow


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _artifact_keys() -> set[str]:
    with get_client(sync_client=True) as client:
        return {a.key for a in client.read_artifacts() if a.key}


def _task_run_names() -> list[str]:
    with get_client(sync_client=True) as client:
        return [t.name for t in client.read_task_runs()]


def test_flow_on_the_sample_writes_results_and_artifacts(harness: None, tmp_path: Path) -> None:
    request = RunRequest(results_dir=str(tmp_path), run_id="flow")
    result = benchmark(request)
    run_dir = tmp_path / "flow"
    assert result["run_dir"] == str(run_dir)
    table = pq.read_table(run_dir / "retrieval.parquet").to_pylist()
    questions = {r["question_id"] for r in table}
    assert len(questions) == 34 and len(table) == 68
    assert all(r["status"] == "ok" for r in table)
    assert {"summary.md", "summary.json", "manifest.json", "retrieval.parquet"} <= {
        p.name for p in run_dir.iterdir()
    }
    assert {"retrieval-summary", "run-summary"} <= _artifact_keys()
    names = _task_run_names()
    assert any(n.startswith("ingest ") and "(multi-session)" in n for n in names)

    db = sqlite3.connect(tmp_path / "memory.sqlite")
    count = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    benchmark(request)  # same run id again: memories are reused, nothing is duplicated
    assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == count
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 34


def test_failed_question_becomes_error_rows_and_fails_the_run(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = steps.ingest_question

    async def flaky(ref: Any, settings: Any, run_id: str, *rest: Any) -> Any:
        if ref.index == 0:
            raise ValueError("memory rejected the write")
        return await real(ref, settings, run_id, *rest)

    monkeypatch.setattr(steps, "ingest_question", flaky)
    with pytest.raises(RunFailures, match="1 question"):
        benchmark(RunRequest(results_dir=str(tmp_path), run_id="broken", limit=3))
    table = pq.read_table(tmp_path / "broken" / "retrieval.parquet").to_pylist()
    assert [r["status"] for r in table].count("error") == 2
    assert all("memory rejected the write" in r["error"] for r in table if r["status"] == "error")
    assert sum(r["status"] == "ok" for r in table) == 4


def test_every_stage_then_judging_again_over_existing_hypotheses(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = RunRequest(
        config="configs/full-fake.toml", results_dir=str(tmp_path), run_id="full", limit=4
    )
    result = benchmark(request)
    run_dir = tmp_path / "full"
    assert "qa" in result["summary"]
    retrieval_before = (run_dir / "retrieval.parquet").read_bytes()
    hypotheses_before = (run_dir / "hypotheses.parquet").read_bytes()

    monkeypatch.setenv("LME_RUN__STAGES", '["judge", "report"]')
    monkeypatch.setenv("LME_MODELS__JUDGE", "fake:yes")
    again = benchmark(request)
    scores = pq.read_table(run_dir / "scores.parquet").to_pylist()
    assert {s["judge"] for s in scores} == {"fake:yes", "fallback:normalized-match"}
    assert again["summary"]["qa"]["judges"]["fake:yes"]["overall"]["correct"] == 4
    assert (run_dir / "retrieval.parquet").read_bytes() == retrieval_before  # kept, not redone
    assert (run_dir / "hypotheses.parquet").read_bytes() == hypotheses_before
    names = _task_run_names()
    assert any(n.startswith("answer ") for n in names) and any(
        n.startswith("judge ") for n in names
    )


def _artifacts_of_last_run(key: str) -> Any:
    with get_client(sync_client=True) as client:
        found = [a for a in client.read_artifacts() if a.key == key]
    return max(found, key=lambda a: a.created)


def test_ui_artifacts_progress_scores_links_and_comparison(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = {"config": "configs/full-fake.toml", "results_dir": str(tmp_path), "limit": 5}
    benchmark(RunRequest(run_id="base", **common))
    base_summary = _artifacts_of_last_run("run-summary").data
    report_uri = (tmp_path / "base" / "report.html").resolve().as_uri()
    assert re.findall(r"\]\(([^)]+)\)", base_summary)[0] == report_uri  # report.html first
    monkeypatch.setenv("LME_RUN__LINK_BASE", "http://127.0.0.1:4201/")
    overrides = {"qa.strategy": "two-pass"}
    benchmark(RunRequest(run_id="change", compare_to="base", overrides=overrides, **common))

    progress = _artifacts_of_last_run("question-progress")
    assert progress.type == "progress" and float(progress.data) == 100.0
    assert "5 of 5 questions done" in (progress.description or "")
    scores = _artifacts_of_last_run("qa-scores")
    rows = scores.data if isinstance(scores.data, list) else json.loads(scores.data)
    assert {r["question type"] for r in rows} >= {"overall", "task-averaged"}
    assert all(re.fullmatch(r"\d{1,3}\.\d% \(\d+ / \d+\)", r["accuracy"]) for r in rows)
    summary = _artifacts_of_last_run("run-summary").data
    assert "## Result files" in summary
    assert "(http://127.0.0.1:4201/change/scores.parquet)" in summary  # under [run] link_base
    assert "file://" not in summary
    comparison = _artifacts_of_last_run("compare").data
    verdict, rest = comparison.split("\n\n", 1)  # the regression gate's, then the comparison
    assert verdict.startswith("**no regression vs base")
    assert rest.startswith("![the comparison chart")
    assert "data:image/png;base64," in comparison
    assert "(http://127.0.0.1:4201/change/compare/" in comparison
    assert (tmp_path / "change" / "compare").is_dir()
    manifest = json.loads((tmp_path / "change" / "manifest.json").read_text())
    assert manifest["request"]["overrides"] == overrides
    assert manifest["config"]["qa"]["strategy"] == "two-pass"


SLOW_MODELS = """
[providers.slow]
kind = "fake"
latency_s = 0.05

[ingest]
mode = "context-only"

[models]
agent = "slow:note-taker"
qa = "slow:quote-memory"
judge = "slow:match-judge"
"""


@pytest.mark.parametrize(
    ("limits", "stages", "expected"),
    [
        # the provider's limit binds: stages would allow 8 + 8 + 8 calls at once
        (
            "[limits]\ningest = 8\nanswer = 8\njudge = 8\n"
            "[limits.providers.slow]\nconcurrency = 3\n",
            None,
            3,
        ),
        # the ingest stage's limit binds: 2 questions ingest at once, one call each
        ("[limits]\ningest = 2\n", ["ingest", "report"], 2),
    ],
)
def test_concurrency_limits_hold_in_a_flow_run(
    harness: None, tmp_path: Path, limits: str, stages: list[str] | None, expected: int
) -> None:
    from lme_bench.providers.fake_stats import FAKE_CALLS

    config = tmp_path / "slow.toml"
    config.write_text(SLOW_MODELS + limits)
    FAKE_CALLS.reset()
    request = RunRequest(
        config=str(config), results_dir=str(tmp_path), run_id="slow", limit=8, stages=stages
    )
    benchmark(request)
    assert FAKE_CALLS.total > 8 * expected
    assert FAKE_CALLS.max_in_flight == expected


def test_task_cache_on_an_fsspec_url(harness: None, tmp_path: Path) -> None:
    """`[cache] storage` may be any fsspec URL (here fsspec's in-memory file system)."""
    import fsspec

    url = f"memory://lme-bench-cache-{tmp_path.name}"
    request = RunRequest(
        results_dir=str(tmp_path), run_id="url", limit=3, overrides={"cache.storage": url}
    )
    benchmark(request)
    stored = fsspec.filesystem("memory").find(url.removeprefix("memory://"))
    assert len(stored) >= 6  # 3 ingestions + 3 retrieval results, at least
    assert not (tmp_path / ".cache" / "tasks").exists()
    again = benchmark(request)
    assert again["from_cache"] == {"ingest": 3, "retrieval": 3, "answer": 0, "judge": 0}


def test_task_tags_by_stage_and_question_type_when_asked(harness: None, tmp_path: Path) -> None:
    overrides = {"run.task_tags": True}
    request = RunRequest(results_dir=str(tmp_path), run_id="tags", limit=2, overrides=overrides)
    benchmark(request)
    with get_client(sync_client=True) as client:
        runs = [r for r in client.read_task_runs() if r.name.startswith("retrieval ")]
    latest = max(runs, key=lambda r: r.expected_start_time or r.created)
    question_type = latest.name.rsplit("(", 1)[1].rstrip(")")
    assert set(latest.tags) == {"retrieval", f"type:{question_type}"}


def test_the_judges_are_built_once_per_run_not_per_question(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.judge.runner import LlmJudge

    built: list[str] = []
    original = LlmJudge.__init__

    def counting(self: LlmJudge, *args: Any, **kwargs: Any) -> None:
        built.append(str(args[0] if args else kwargs.get("name")))
        original(self, *args, **kwargs)

    monkeypatch.setattr(LlmJudge, "__init__", counting)
    monkeypatch.setenv("LME_JUDGE__SECOND_MODEL", "fake:yes")
    request = RunRequest(
        config="configs/full-fake.toml", results_dir=str(tmp_path), run_id="once", limit=4
    )
    result = benchmark(request)
    judged = result["summary"]["qa"]["judges"]
    assert judged["fake:match-judge"]["overall"]["n"] == 4  # four questions judged ...
    assert judged["fake:yes"]["overall"]["n"] == 4
    assert sorted(built) == ["fake:match-judge", "fake:yes"]  # ... by judges built once


def test_the_qa_model_and_the_memory_model_are_built_once_per_run(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.providers import factory

    built: list[str] = []
    original = factory.build_chat_model

    def counting(spec: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(spec.role)
        return original(spec, *args, **kwargs)

    monkeypatch.setattr(factory, "build_chat_model", counting)
    # a memory model the embedded store is handed (and does not call): built for each system
    # opened, were the configuration derived again per stage and question
    monkeypatch.setenv("LME_MODELS__MEMORY", "fake:mem0-extractor")
    request = RunRequest(
        config="configs/full-fake.toml", results_dir=str(tmp_path), run_id="once", limit=4
    )
    result = benchmark(request)
    assert result["summary"]["qa"]["judges"]["fake:match-judge"]["overall"]["n"] == 4
    assert sorted(built.count(role) for role in ("qa", "memory")) == [1, 1]
