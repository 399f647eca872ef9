"""The default config run with its task cache on a real S3 server (SeaweedFS on loopback): the
cache's objects land in the bucket, a rerun takes every stage from there, and the credentials,
which come from the environment, are in no file the run writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench.run.request import RunRequest
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server, s3_bucket, s3_server

pytestmark = pytest.mark.slow
__all__ = ["s3_bucket", "s3_server"]

LIMIT = 3
STAGES = ("ingest", "retrieval")  # the default config: raw ingestion, BM25, no models


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _run(request: RunRequest) -> dict[str, Any]:
    result: dict[str, Any] = benchmark(request, return_state=True).result()
    return result


def test_a_run_with_its_cache_on_s3_is_all_cached_on_rerun(
    harness: None, s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    request = RunRequest(
        config="configs/default.toml",
        results_dir=str(tmp_path),
        run_id="on-s3",
        limit=LIMIT,
        overrides={"cache.storage": f"s3://{s3_bucket}/cache"},
    )
    first = _run(request)
    assert {stage: first["from_cache"][stage] for stage in STAGES} == dict.fromkeys(STAGES, 0)
    listed = s3_server.client().list_objects_v2(Bucket=s3_bucket).get("Contents", [])
    keys = [item["Key"] for item in listed]
    assert len(keys) >= LIMIT * len(STAGES) and all(k.startswith("cache/") for k in keys)
    assert not (tmp_path / ".cache" / "tasks").exists()  # the cache went to the bucket only

    second = _run(request)
    assert {stage: second["from_cache"][stage] for stage in STAGES} == dict.fromkeys(STAGES, LIMIT)

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert tmp_path / "on-s3" / "manifest.json" in written
    for path in written:
        data = path.read_bytes()
        assert ACCESS_KEY.encode() not in data and SECRET_KEY.encode() not in data, path
