"""A shard worker killed mid-ingestion, on workers that share no disk (tests/integration/
no_shared_disk.py): `worker-a`'s flow run process exits at once, as a killed one would, right
after a session of a question of its shard was written (LME_FAULT_EXIT, lme_bench/common/
fault_points.py). The parent redoes that shard's unfinished questions itself: the run ends with
every question answered, no table holds a row twice, and its figures are those of the same run
on local disk. A rerun, the fault still armed on `worker-a`, takes every stage from the cache
and leaves no run folder on the shard workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.common.fault_points import EXIT_STATUS, FAULT_ENV
from lme_bench.results.run_mirror import pull_run
from lme_bench.run.steps import bundled_sample
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
    worker_logs,
)
from tests.integration.runs import FakeLlm
from tests.s3_server import S3Server, s3_bucket, s3_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]
__all__ = ["s3_bucket", "s3_server"]

QUESTIONS = 4
RUN_ID = "killed-shard"
KILLED_AT = 3  # the session of the killed question after which its worker dies


def _ingested(names: list[str]) -> set[str]:
    """The questions of ingest task runs named `ingest <question id> (<type>)`."""
    return {name.split(" ")[1] for name in names if name.startswith("ingest ")}


def test_a_shard_worker_killed_mid_ingestion(
    fake_llm: FakeLlm, s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    request = scale_out_request(s3_bucket, fake_llm.base_url, RUN_ID, QUESTIONS)
    ids = [q["question_id"] for q in json.loads(bundled_sample().read_text())[:QUESTIONS]]
    first = ids[0::2]  # shard 1, as the scale-out flow splits the questions
    killed = first[-1]
    with shared_nothing(tmp_path, s3_server) as setup:
        local = local_run(setup, request)
        # shard 1 goes to queue shard-a, which only worker-a polls
        setup.envs["worker-a"][FAULT_ENV] = f"ingest:{killed}:{KILLED_AT}"

        parent, submitted = sharded_run(setup, request)
        shards = {submitted[str(s.id)]: s for s in shard_runs(setup.stack, parent)}
        assert shards["worker-a"].state_name == "Crashed", worker_logs(setup)
        assert shards["worker-b"].state_name == "Completed"
        died = setup.log("worker-a")
        assert f"exited with status code: {EXIT_STATUS}" in died, died[-4000:]
        said = "shard 1/2 ended Crashed: this run redoes the questions it left unfinished"
        assert said in setup.log("parent"), worker_logs(setup)
        # the parent ingested what the killed shard left unfinished, nothing of the other shard
        redone = _ingested(stage_task_runs(setup.stack, [parent]))
        assert killed in redone and redone <= set(first), redone

        pulled = pull_run(request["results_dir"], tmp_path / "pulled", RUN_ID)
        assert pulled is not None
        manifest = json.loads((pulled / "manifest.json").read_text())
        assert manifest["question_ids"] == ids and manifest["failed_question_ids"] == []
        assert repeated_keys(pulled) == {}
        assert_same_as_local(local, pulled)

        # a rerun, worker-a still set to die at that session: no stage runs, no model call
        before = len(fake_llm.fake.requests)
        again, _ = sharded_run(setup, request)
        assert len(fake_llm.fake.requests) == before
        seen = frozenset(s.id for s in shards.values())
        rerun = [again, *(s.id for s in shard_runs(setup.stack, again, seen))]
        assert stage_task_runs(setup.stack, rerun) == []
        again_pulled = pull_run(request["results_dir"], tmp_path / "pulled-again", RUN_ID)
        assert again_pulled is not None
        assert repeated_keys(again_pulled) == {}
        assert_same_as_local(local, again_pulled)
    # the killed shard's working copy of the run went when its shard ran again and finished
    for name in ("worker-a", "worker-b"):
        assert shard_work_left(tmp_path / name) == [], name
