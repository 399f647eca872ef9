"""The storage layer against a real S3 server (SeaweedFS on loopback): objects written whole,
a run folder's manifest last, credentials taken from the environment and never shown."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from lme_bench.results.manifest import write_manifest
from lme_bench.results.store import RunStore, StorageError
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

pytestmark = pytest.mark.slow  # starts a server


def _keys(server: S3Server, bucket: str) -> dict[str, bytes]:
    """Every object of the bucket as the server holds it, read with a client of the test's own."""
    client = server.client()
    listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {
        item["Key"]: client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        for item in listed
    }


def test_objects_are_put_whole_read_listed_and_found(s3_server: S3Server, s3_bucket: str) -> None:
    runs = RunStore(f"s3://{s3_bucket}/runs")
    runs.put_text("run-1/summary.md", "a first, longer version\n" * 100)
    runs.put_text("run-1/summary.md", "# done\n")
    runs.put_bytes("run-1/scores.parquet", b"PAR1" * 1000)
    assert runs.read_text("run-1/summary.md") == "# done\n"
    assert runs.exists("run-1/scores.parquet") and not runs.exists("run-1/manifest.json")
    assert runs.names() == ["run-1/scores.parquet", "run-1/summary.md"]
    assert runs.child("run-1").names() == ["scores.parquet", "summary.md"]
    assert _keys(s3_server, s3_bucket) == {
        "runs/run-1/scores.parquet": b"PAR1" * 1000,
        "runs/run-1/summary.md": b"# done\n",
    }


def test_a_refused_write_names_the_url_and_leaves_nothing(
    s3_server: S3Server, s3_bucket: str
) -> None:
    missing = RunStore("s3://no-such-bucket-for-lme/runs")
    with pytest.raises(StorageError) as caught:
        missing.put_text("run-1/manifest.json", "{}")
    assert "s3://no-such-bucket-for-lme/runs/run-1/manifest.json" in str(caught.value)
    names = [b["Name"] for b in s3_server.client().list_buckets()["Buckets"]]
    assert "no-such-bucket-for-lme" not in names


def test_a_published_run_shows_its_manifest_only_once_every_file_is_there(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run-1"
    for name in ("scores.parquet", "summary.md", "exports/hypotheses.jsonl", "manifest.json"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"contents of {name}")
    seen_at_manifest: list[set[str]] = []
    put_file = RunStore.put_file

    def watching(self: RunStore, name: str, source: Path) -> None:
        if name == "manifest.json":  # what a reader polling the bucket sees just before
            seen_at_manifest.append(set(_keys(s3_server, s3_bucket)))
        put_file(self, name, source)

    monkeypatch.setattr(RunStore, "put_file", watching)
    RunStore(f"s3://{s3_bucket}/runs").child("run-1").publish_folder(folder)
    assert seen_at_manifest == [
        {
            "runs/run-1/scores.parquet",
            "runs/run-1/summary.md",
            "runs/run-1/exports/hypotheses.jsonl",
        }
    ]
    stored = _keys(s3_server, s3_bucket)
    assert stored["runs/run-1/manifest.json"] == b"contents of manifest.json"
    assert len(stored) == 4


def test_credentials_reach_the_server_from_the_environment_only_and_are_never_written(
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="lme_bench")
    folder = tmp_path / "run-1"
    folder.mkdir()
    (folder / "summary.md").write_text("# done\n")
    write_manifest(folder / "manifest.json", {"run_id": "run-1", "results": "s3://…"})
    runs = RunStore(f"s3://{s3_bucket}/runs")
    runs.child("run-1").publish_folder(folder)
    with pytest.raises(StorageError) as caught:
        RunStore("s3://no-such-bucket-for-lme").put_text("x", "y")
    stored = _keys(s3_server, s3_bucket)
    assert json.loads(stored["runs/run-1/manifest.json"])["run_id"] == "run-1"
    shown = [str(caught.value), repr(runs), runs.url("run-1"), caplog.text]
    shown += [data.decode("utf-8", "replace") for data in stored.values()]
    for secret in (ACCESS_KEY, SECRET_KEY):
        assert not [text for text in shown if secret in text]
