"""A run whose results and task cache are on a real S3 server (SeaweedFS on loopback) that is
killed while the finished run is being copied there: the run fails with one error naming the
object's URL and no credential, the bucket holds no manifest (so no reader takes the half-copied
run for a finished one), and once the server is back on the same data a rerun takes every stage
from the cache and lands the run whole, with the tables of a clean run."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.results.run_folder import RerunError
from lme_bench.results.run_mirror import pull_run
from lme_bench.results.store import RunStore, StoreUnavailable
from tests.s3_server import ACCESS_KEY, SECRET_KEY, KillableServer, killable_s3_server

pytestmark = pytest.mark.slow
__all__ = ["killable_s3_server"]

LIMIT = 3
STAGES = ("ingest", "retrieval")
TIMING = ("seconds", "latency", "_at", "_ms", "run_id")
FAULT_AT = "summary.json"  # published after the tables, before manifest.json


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _run(results_dir: str, cache: str) -> dict[str, Any]:
    from lme_bench.run.request import RunRequest

    overrides = {"cache.storage": cache, "run.store_retries": 1, "run.store_retry_wait_s": 0.1}
    request = RunRequest(
        config="configs/default.toml",
        results_dir=results_dir,
        run_id="r1",
        limit=LIMIT,
        overrides=overrides,
    )
    result: dict[str, Any] = benchmark(request, return_state=True).result()
    return result


def _rows(data: bytes, folder: Path, name: str) -> list[dict[str, Any]]:
    (folder / name).write_bytes(data)
    rows = pq.read_table(folder / name).to_pylist()
    return [{k: v for k, v in r.items() if not any(t in k for t in TIMING)} for r in rows]


def test_a_store_down_while_the_run_is_copied_fails_it_once_and_a_rerun_lands_it_whole(
    harness: None,
    killable_s3_server: KillableServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    bucket = killable_s3_server.new_bucket(monkeypatch)
    url, cache = f"s3://{bucket}/runs", f"s3://{bucket}/cache"
    clean = _run(str(tmp_path / "clean"), str(tmp_path / "clean-cache"))

    put_file, fired = RunStore.put_file, []

    def put_and_fail(store: RunStore, name: str, source: Path) -> None:
        if name == FAULT_AT and not fired:
            fired.append(name)
            killable_s3_server.kill()  # the fault point: the server goes mid-copy, once
        put_file(store, name, source)

    monkeypatch.setattr(RunStore, "put_file", put_and_fail)
    with pytest.raises(StoreUnavailable) as failed:
        _run(url, cache)
    message = str(failed.value)
    assert message.startswith(f"cannot write {url}/r1/{FAULT_AT}: the store did not answer")
    assert "Traceback" not in message and "\n" not in message

    killable_s3_server.restart()
    client = killable_s3_server.server.client()
    listed = client.list_objects_v2(Bucket=bucket, Prefix="runs/r1/").get("Contents", [])
    keys = {item["Key"] for item in listed}
    assert "runs/r1/retrieval.parquet" in keys  # copied before the fault
    assert "runs/r1/manifest.json" not in keys and f"runs/r1/{FAULT_AT}" not in keys
    with pytest.raises(RerunError, match="no finished run here"):
        pull_run(url, tmp_path / "elsewhere", "r1")

    rerun = _run(url, cache)
    assert {s: rerun["from_cache"][s] for s in STAGES} == dict.fromkeys(STAGES, LIMIT)
    for name in ("manifest.json", FAULT_AT):
        client.head_object(Bucket=bucket, Key=f"runs/r1/{name}")
    for name in ("retrieval.parquet", "ingest.parquet"):
        data = client.get_object(Bucket=bucket, Key=f"runs/r1/{name}")["Body"].read()
        expected = (Path(clean["run_dir"]) / name).read_bytes()
        assert _rows(data, tmp_path, name) == _rows(expected, tmp_path, "clean-" + name), name

    said = capsys.readouterr()
    for text in (message, said.out, said.err, caplog.text):
        assert SECRET_KEY not in text and ACCESS_KEY not in text
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert SECRET_KEY.encode() not in data and ACCESS_KEY.encode() not in data, path
