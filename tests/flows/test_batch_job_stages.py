"""The `benchmark` flow with `[judge] batch` (and `[qa] batch`) against a loopback OpenAI Batch
API: the run's tables are those of a call-by-call run (timing aside), the jobs' ids are in the
manifest and their price in the cost, and a run restarted while its job runs waits for that
same job."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows import batch_job_stages
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.providers.fake_batch_server import serve_batches

pytestmark = pytest.mark.slow  # runs the whole flow

TIMING = ("seconds", "latency", "_ms", "_s")
JUDGE = "lab:gpt-4o-2024-08-06"


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


READER = "lab:gpt-4o-mini"


def _config(tmp_path: Path, base_url: str, reader: str = "fake:quote-memory") -> Path:
    config = tmp_path / "batch.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\nbatch_poll_s = 0.01\n'
        f'[models]\nqa = "{reader}"\njudge = "{JUDGE}"\n'
        f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{base_url}"\n'
        "[judge]\nbatch_poll_s = 0.01\n"
        f'[prices."{JUDGE}"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10.0\n'
        f'[prices."{READER}"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n'
    )
    return config


def _run(config: Path, results: Path, batch: bool, answers: bool = False) -> dict[str, Any]:
    request = RunRequest(
        config=str(config),
        results_dir=str(results),
        run_id="run",
        limit=6,
        overrides={"judge.batch": batch, "qa.batch": answers},
    )
    result: dict[str, Any] = benchmark(request)
    return result


def _table(path: Path) -> list[dict[str, Any]]:
    rows = pq.read_table(path).to_pylist()
    return [{k: v for k, v in r.items() if not k.endswith(TIMING)} for r in rows]


def test_batch_run_tables_equal_the_call_by_call_run(harness: None, tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        config = _config(tmp_path, base_url)
        batched = _run(config, tmp_path / "batched", batch=True)
        assert len(fake.batches) == 1 and not fake.chat_requests
        live = _run(config, tmp_path / "live", batch=False)
        assert len(fake.chat_requests) == 6
    for table in ("scores.parquet", "hypotheses.parquet", "retrieval.parquet"):
        assert _table(tmp_path / "batched" / "run" / table) == _table(
            tmp_path / "live" / "run" / table
        ), table
    manifest = json.loads((tmp_path / "batched" / "run" / "manifest.json").read_text())
    (job,) = manifest["batches"]
    assert (job["job_id"], job["answered"], job["state"]) == ("batch-2", 6, "completed")
    live_cost = live["summary"]["cost"]["judging"]
    assert batched["summary"]["cost"]["judging"] == pytest.approx(live_cost / 2)


def test_a_restarted_run_waits_for_the_job_it_submitted(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stopped(*args: Any) -> None:
        raise RuntimeError("the worker went away")

    with serve_batches() as (base_url, fake):
        config = _config(tmp_path, base_url)
        with monkeypatch.context() as patched:
            patched.setattr(batch_job_stages, "_wait", stopped)
            with pytest.raises(RuntimeError, match="worker went away"):
                _run(config, tmp_path, batch=True)
        assert len(fake.batches) == 1
        result = _run(config, tmp_path, batch=True)
        assert len(fake.batches) == 1 and not fake.chat_requests
    scores = pq.read_table(tmp_path / "run" / "scores.parquet").to_pylist()
    assert len([s for s in scores if s["judge"] == JUDGE and s["status"] == "ok"]) == 6
    assert result["summary"]["incomplete"]["failed"] == 0


def test_answers_and_verdicts_in_batches_equal_the_call_by_call_run(
    harness: None, tmp_path: Path
) -> None:
    with serve_batches() as (base_url, fake):
        config = _config(tmp_path, base_url, reader=READER)
        batched = _run(config, tmp_path / "batched", batch=True, answers=True)
        assert len(fake.batches) == 2 and not fake.chat_requests  # answers, then verdicts
        live = _run(config, tmp_path / "live", batch=False)
        assert len(fake.chat_requests) == 12
    for table in ("scores.parquet", "hypotheses.parquet", "retrieval.parquet"):
        assert _table(tmp_path / "batched" / "run" / table) == _table(
            tmp_path / "live" / "run" / table
        ), table
    manifest = json.loads((tmp_path / "batched" / "run" / "manifest.json").read_text())
    assert sorted(b["stage"] for b in manifest["batches"]) == ["answer", "judge"]
    for part in ("answering", "judging"):
        live_cost = live["summary"]["cost"][part]
        assert batched["summary"]["cost"][part] == pytest.approx(live_cost / 2), part


def test_a_run_judged_call_by_call_keeps_its_verdicts_when_batch_is_switched_on(
    harness: None, tmp_path: Path
) -> None:
    with serve_batches() as (base_url, fake):
        config = _config(tmp_path, base_url)
        _run(config, tmp_path, batch=False)
        again = _run(config, tmp_path, batch=True)  # the same run id: its settings hold
        assert not fake.batches and len(fake.chat_requests) == 6
    assert again["from_cache"]["judge"] == 6


def test_answers_in_a_batch_are_judged_call_by_call(harness: None, tmp_path: Path) -> None:
    with serve_batches() as (base_url, fake):
        config = _config(tmp_path, base_url, reader=READER)
        result = _run(config, tmp_path, batch=False, answers=True)
        assert len(fake.batches) == 1 and len(fake.chat_requests) == 6  # the verdicts
    scores = pq.read_table(tmp_path / "run" / "scores.parquet").to_pylist()
    assert len([s for s in scores if s["judge"] == JUDGE and s["status"] == "ok"]) == 6
    assert result["summary"]["incomplete"]["failed"] == 0
