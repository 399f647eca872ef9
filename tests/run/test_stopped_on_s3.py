"""A run kept at an S3 URL that is stopped leaves its summary there too, and no manifest: the
bucket shows what the stop spent, and no reader takes the run for finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.config.settings import load_settings
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord
from lme_bench.results.run_folder import RerunError
from lme_bench.results.run_mirror import pull_run
from lme_bench.run import stopped
from tests.s3_server import S3Server, s3_bucket, s3_server

pytestmark = pytest.mark.slow
__all__ = ["s3_bucket", "s3_server"]


def test_a_stopped_run_at_a_url_leaves_its_summary_there_and_no_manifest(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    url = f"s3://{s3_bucket}/runs"
    settings = load_settings(
        Path("configs/default.toml"),
        **{"run.results_dir": url, "run.work_dir": str(tmp_path / "work")},
    )
    work = settings.run.results_dir
    checkpoints = Checkpoints(work / "checkpoints.sqlite")
    record = SessionRecord("q1", "s0", 0, "raw", turns=2)
    checkpoints.save_pending("m1", record, [], None)
    checkpoints.mark_all_done("m1", [record])
    checkpoints.close()

    line = stopped.write_stopped_summary(
        stopped.StoppedRun.of(settings, work / "r1", ["m1"]), "SIGTERM"
    )
    assert line.startswith("Stopped by SIGTERM: 1 sessions stored")
    client = s3_server.client()
    listed = client.list_objects_v2(Bucket=s3_bucket, Prefix="runs/r1/").get("Contents", [])
    assert sorted(o["Key"] for o in listed) == ["runs/r1/summary.json", "runs/r1/summary.md"]
    body = client.get_object(Bucket=s3_bucket, Key="runs/r1/summary.json")["Body"].read()
    assert body == (work / "r1" / "summary.json").read_bytes()
    assert json.loads(body)["stopped"]["signal"] == "SIGTERM"
    with pytest.raises(RerunError, match="no finished run here"):
        pull_run(url, tmp_path / "elsewhere", "r1")
