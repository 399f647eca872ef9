"""Runs whose memory agent is a model on a loopback OpenAI-compatible server, as with a local
llama.cpp: a run whose server fails midway counts in its summary what it spent and stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lme_bench_flows.longmemeval import RunFailures, longmemeval
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.providers.fake_openai_server import serve

pytestmark = pytest.mark.slow

CONFIG = """\
[ingest]
mode = "context-only"

[models]
agent = "local:tiny"
qa = "fake:quote-memory"
judge = "fake:match-judge"

[providers.local]
kind = "openai-compatible"
base_url = "{base_url}"

[prices."local:tiny"]
input_per_mtok = 1000.0
output_per_mtok = 2000.0
"""
CONTEXT = {"tool_calls": [("put_context", {"content": "Facts:\n- the user has a dog"})]}
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
        config=str(config), results_dir=str(tmp_path), run_id=run_id, limit=1, **fields
    )


def test_a_failed_run_counts_the_calls_tokens_cost_and_sessions_it_spent(
    harness: None, tmp_path: Path
) -> None:
    stored = 3  # the server answers three sessions' calls, then refuses every request
    with (
        serve([CONTEXT] * stored + [REFUSED]) as (url, fake),
        pytest.raises(RunFailures, match="1 question"),
    ):
        longmemeval(_request(tmp_path, _config(tmp_path, url), "dies"))
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
