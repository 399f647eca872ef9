"""Runs whose memory agent is a model on a loopback OpenAI-compatible server, as with a local
llama.cpp: a run whose server fails midway counts in its summary what it spent and stored; a
server that comes back at another port is named for the rerun, which keeps what was done."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows import command as cli
from lme_bench_flows.benchmark import RunFailures, benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.dataset.loader import iter_questions
from lme_bench.run.request import RunRequest
from lme_bench.run.steps import bundled_sample
from tests.flows.priced_local_agent import CONFIG, CONTEXT
from tests.providers.fake_openai_server import serve

pytestmark = pytest.mark.slow

REFUSED = {"status": 400, "message": "the model server refused the request"}


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _config(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "local.toml"
    path.write_text(CONFIG.format(base_url=base_url))
    return path


def _request(tmp_path: Path, config: Path, run_id: str, **fields: Any) -> RunRequest:
    return RunRequest(
        **{"config": str(config), "results_dir": str(tmp_path), "run_id": run_id, "limit": 1}
        | fields
    )


def test_a_failed_run_counts_the_calls_tokens_cost_and_sessions_it_spent(
    harness: None, tmp_path: Path
) -> None:
    stored = 3  # the server answers three sessions' calls, then refuses every request
    with (
        serve([CONTEXT] * stored + [REFUSED]) as (url, fake),
        pytest.raises(RunFailures, match="1 question"),
    ):
        benchmark(_request(tmp_path, _config(tmp_path, url), "dies"))
    made = len(fake.requests)
    assert made > stored  # the refused call too
    summary = json.loads((tmp_path / "dies" / "summary.json").read_text())
    ingestion = summary["ingestion"]
    assert ingestion["modes"] == ["context-only"]
    assert ingestion["sessions"] == stored and ingestion["unfinished_sessions"] == stored
    assert ingestion["llm_calls"] == stored  # the calls of the stored sessions
    assert ingestion["input_tokens"] > 0 and ingestion["output_tokens"] > 0
    assert summary["cost"]["ingestion"] > 0
    markdown = (tmp_path / "dies" / "summary.md").read_text()
    assert "no memory agent model calls" not in markdown
    assert f"{stored} sessions" in markdown and f"made {stored} model calls" in markdown


def _rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(run_dir / f"{table}.parquet").to_pylist()
    return [{k: v for k, v in row.items() if k != "search_seconds"} for row in rows]


def test_a_rerun_names_the_moved_model_server_and_keeps_the_finished_results(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = [
        q.instance for q, _ in zip(iter_questions(bundled_sample()), range(2), strict=False)
    ]
    sessions = {q.question_id: len(q.haystack_sessions) for q in (first, second)}
    done_first = max(sessions, key=lambda q: sessions[q])  # ingested first: the longest
    other = next(q for q in sessions if q != done_first)
    answered = sessions[done_first]  # then server A refuses: the other question fails
    with (
        serve([CONTEXT] * answered + [REFUSED]) as (url_a, _),
        pytest.raises(RunFailures, match="1 question"),
    ):
        config = _config(tmp_path, url_a)
        benchmark(_request(tmp_path, config, "moved", limit=2, overrides={"limits.ingest": 1}))
    run_dir = tmp_path / "moved"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == [other]
    kept = {
        t: [r for r in _rows(run_dir, t) if r["question_id"] == done_first]
        for t in ("ingest", "retrieval", "hypotheses", "scores")
    }

    # server A is gone; the same model answers on server B
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.setenv("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
    with serve([CONTEXT]) as (url_b, fake_b):
        moved = f"local={url_b}"
        code = cli.main(
            ["rerun", "moved", "--results-dir", str(tmp_path), "--failed-only", "--base-url", moved]
        )
    assert code == 0
    assert len(fake_b.requests) == sessions[other]  # the other question's sessions alone
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == []
    (move,) = manifest["endpoint_moves"]
    assert (move["setting"], move["from"], move["to"]) == ("providers.local.base_url", url_a, url_b)
    assert move["at"] > manifest["started_at"][:10]
    recorded = json.loads((run_dir / "config.json").read_text())
    assert recorded["settings"]["providers"]["local"]["base_url"] == url_b  # the next rerun's
    assert recorded["moves"] == manifest["endpoint_moves"]
    for table, rows in kept.items():  # the finished question's rows, as they were
        assert [r for r in _rows(run_dir, table) if r["question_id"] == done_first] == rows


def test_the_rerun_hints_of_a_failed_run_work_as_typed_from_elsewhere(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "lab results"  # set in the config alone, and with a space
    with serve([CONTEXT, REFUSED]) as (url, fake):
        config = _config(tmp_path, url)
        config.write_text(config.read_text() + f'\n[run]\nresults_dir = "{results}"\n')
        with pytest.raises(RunFailures) as failed:
            benchmark(RunRequest(config=str(config), run_id="hinted", limit=1))
        summary = (results / "hinted" / "summary.md").read_text()
        hints = {
            "flow": re.findall(r"`(lme-bench rerun [^`]+)`", str(failed.value)),
            "summary.md": re.findall(r"`(lme-bench rerun [^`]+)`", summary),
        }
        assert hints["flow"] == hints["summary.md"] and len(hints["flow"]) == 1
        (hint,) = hints["flow"]
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)  # the user's shell, somewhere else
        monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        monkeypatch.setenv("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
        fake.replies[:] = [CONTEXT]  # the server is well again
        argv = shlex.split(hint)
        assert argv[0] == "lme-bench"
        assert cli.main(argv[1:]) == 0  # typed as printed
    manifest = json.loads((results / "hinted" / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == []
    assert not (elsewhere / "results").exists()
