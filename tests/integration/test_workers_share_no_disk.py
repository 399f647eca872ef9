"""Scale-out on workers that share no disk: the scale-out deployment with results and task cache
in a bucket of a real S3 server (SeaweedFS on loopback), its parent on a worker of its own and
its two shards on two more process workers, each worker with its own HOME, PREFECT_HOME,
working folder and temp folder; only the Prefect server, the bucket and the model server are
shared. The run matches the same run on local disk, a rerun makes no model call and runs no
stage, and no worker keeps a run folder: the run is in the bucket only."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.results.run_mirror import pull_run
from tests.integration.no_shared_disk import (
    assert_same_as_local,
    local_run,
    repeated_keys,
    scale_out_request,
    shard_runs,
    shard_work_left,
    sharded_run,
    shared_nothing,
    stage_task_runs,
)
from tests.integration.runs import FakeLlm
from tests.s3_server import S3Server, s3_bucket, s3_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]
__all__ = ["s3_bucket", "s3_server"]

QUESTIONS = 4
RUN_ID = "no-shared-disk"


def test_a_sharded_run_on_workers_sharing_no_disk(
    fake_llm: FakeLlm, s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    request = scale_out_request(s3_bucket, fake_llm.base_url, RUN_ID, QUESTIONS)
    url = request["results_dir"]
    with shared_nothing(tmp_path, s3_server) as setup:
        local = local_run(setup, request)

        before = len(fake_llm.fake.requests)
        parent, submitted = sharded_run(setup, request)
        shards = shard_runs(setup.stack, parent)
        assert len(shards) == 2 and all(s.state_name == "Completed" for s in shards)
        assert submitted[str(parent)] == "parent"
        assert {submitted[str(s.id)] for s in shards} == {"worker-a", "worker-b"}, submitted
        assert len(fake_llm.fake.requests) > before

        pulled = pull_run(url, tmp_path / "pulled", RUN_ID)
        assert pulled is not None
        assert_same_as_local(local, pulled)
        assert repeated_keys(pulled) == {}
        keys = {k["Key"] for k in s3_server.client().list_objects_v2(Bucket=s3_bucket)["Contents"]}
        for name in ("manifest.json", "retrieval.parquet", "hypotheses.parquet", "scores.parquet"):
            assert f"runs/{RUN_ID}/{name}" in keys
        # raw ingestion: a worker lacking a build remakes it, so none is put beside the runs
        assert not any(k.startswith("runs/memory-builds/") for k in keys), keys

        # a rerun: every stage from the cache, no model called
        before = len(fake_llm.fake.requests)
        again, _ = sharded_run(setup, request)
        assert len(fake_llm.fake.requests) == before
        seen = frozenset(s.id for s in shards)
        rerun = [again, *(s.id for s in shard_runs(setup.stack, again, seen))]
        assert stage_task_runs(setup.stack, rerun) == []

    for name in ("parent", "worker-a", "worker-b"):  # the run is in the bucket only
        assert shard_work_left(tmp_path / name) == [], name
        assert not list((tmp_path / name).rglob("manifest.json")), name
        assert not list((tmp_path / name).rglob("*.parquet")), name
