"""A run whose questions share memory builds (two LoCoMo conversations, ten questions): the
Prefect UI's progress counts builds ingested apart from questions answered and judged, and
summary.md's ingestion line counts memory builds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.client.orchestration import get_client
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.benchmarks.locomo.samples import listed_sample, write_json

pytestmark = pytest.mark.slow  # runs the whole flow


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_progress_and_summary_count_builds_apart_from_questions(
    harness: None, tmp_path: Path
) -> None:
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    config = tmp_path / "fake.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\n'
        '[models]\nqa = "fake:quote-memory"\njudge = "fake:match-judge"\n'
    )
    benchmark(
        RunRequest(config=str(config), dataset=str(data), results_dir=str(tmp_path), run_id="b")
    )
    with get_client(sync_client=True) as client:
        found = [a for a in client.read_artifacts() if a.key == "question-progress"]
        scores = [a for a in client.read_artifacts() if a.key == "qa-scores"]
    (progress,) = found  # the one run of this test's server
    (table,) = scores
    assert "not the official LoCoMo metric" in (table.description or "")
    assert progress.data == 100.0
    assert (progress.description or "").startswith(
        "builds ingested 2/2, questions searched 10/10, answered 10/10, judged 10/10"
    )
    summary = (tmp_path / "b" / "summary.md").read_text()
    assert "2 memory builds, 4 sessions, 8 turns" in summary
