"""A LoCoMo run made with `compare_to` another: the Prefect UI's compare artifact leads with
LoCoMo's official F1 paired per question, and the LLM judge's accuracy is titled as not the
official metric."""

from __future__ import annotations

from pathlib import Path

import pytest
from lme_bench_flows.benchmark import benchmark
from prefect import get_client
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.benchmarks.locomo.samples import listed_sample, write_json

pytestmark = pytest.mark.slow  # runs the whole flow twice


def test_the_compare_artifact_of_a_locomo_run_shows_official_f1(tmp_path: Path) -> None:
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    with prefect_test_harness(server_startup_timeout=120):
        for run_id, reader, baseline in (
            ("base", "quote-memory", None),
            ("change", "echo", "base"),
        ):
            config = tmp_path / f"{run_id}.toml"
            config.write_text(
                '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\n'
                f'[models]\nqa = "fake:{reader}"\njudge = "fake:match-judge"\n'
            )
            request = RunRequest(
                config=str(config),
                dataset=str(data),
                results_dir=str(tmp_path),
                run_id=run_id,
                compare_to=baseline,
            )
            benchmark(request)
        with get_client(sync_client=True) as client:
            found = [a for a in client.read_artifacts() if a.key == "compare"]
    assert len(found) == 1  # only the run with a baseline publishes one
    text = str(found[0].data)
    assert "## LoCoMo F1 (official)" in text
    assert "## QA accuracy (LLM judge, not the official LoCoMo metric)" in text
    assert text.index("## LoCoMo F1 (official)") < text.index("## QA accuracy")
    assert (tmp_path / "change" / "compare").is_dir()
