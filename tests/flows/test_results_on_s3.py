"""The default config run with its results folder and task cache on a real S3 server (SeaweedFS
on loopback): the run lands whole in the bucket with the same tables as on local disk, a rerun
takes every stage from the cache, compare and history read the runs from the bucket, a run
without its manifest is not taken for finished, and no local folder is named like the URL."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.benchmark import benchmark
from prefect.testing.utilities import prefect_test_harness

from lme_bench import cli
from lme_bench.results.run_folder import RerunError
from lme_bench.results.run_mirror import pull_run
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server, s3_bucket, s3_server

pytestmark = pytest.mark.slow
__all__ = ["s3_bucket", "s3_server"]

LIMIT = 3
STAGES = ("ingest", "retrieval")  # the default config: raw ingestion, BM25, no models
TIMING = ("seconds", "latency", "_at", "_ms", "run_id")  # columns that differ between runs


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _run(results_dir: str, run_id: str, cache: str, **overrides: Any) -> dict[str, Any]:
    from lme_bench.run.request import RunRequest

    request = RunRequest(
        config="configs/default.toml",
        results_dir=results_dir,
        run_id=run_id,
        limit=LIMIT,
        overrides={"cache.storage": cache, **overrides},
    )
    result: dict[str, Any] = benchmark(request, return_state=True).result()
    return result


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = pq.read_table(path).to_pylist()
    return [{k: v for k, v in r.items() if not any(t in k for t in TIMING)} for r in rows]


def _keys(server: S3Server, bucket: str) -> list[str]:
    listed = server.client().list_objects_v2(Bucket=bucket, MaxKeys=1000).get("Contents", [])
    return [item["Key"] for item in listed]


def test_a_run_at_an_s3_url_lands_whole_and_is_read_back_from_there(
    harness: None,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    url = f"s3://{s3_bucket}/runs"
    local = _run(str(tmp_path / "local"), "r1", str(tmp_path / "local-cache"))
    first = _run(url, "r1", f"s3://{s3_bucket}/cache")
    assert {s: first["from_cache"][s] for s in STAGES} == dict.fromkeys(STAGES, 0)

    keys = _keys(s3_server, s3_bucket)
    for name in ("manifest.json", "summary.json", "config.json", "retrieval.parquet"):
        assert f"runs/r1/{name}" in keys
    work = Path(first["run_dir"]).parent
    assert work.is_relative_to(tmp_path / "home-cache")  # the working folder, not one named s3:
    for name in ("retrieval.parquet", "ingest.parquet"):
        data = s3_server.client().get_object(Bucket=s3_bucket, Key=f"runs/r1/{name}")
        (tmp_path / name).write_bytes(data["Body"].read())
        assert _rows(tmp_path / name) == _rows(Path(local["run_dir"]) / name)
    figures = ("recall_any@5", "ndcg_any@10")
    for granularity in ("session", "turn"):
        on_s3, on_disk = first["summary"][granularity], local["summary"][granularity]
        assert {f: on_s3.get(f) for f in figures} == {f: on_disk.get(f) for f in figures}

    import shutil

    (work / "r1" / "manifest.json").unlink()  # the rerun takes the run from the bucket
    second = _run(url, "r1", f"s3://{s3_bucket}/cache")
    assert {s: second["from_cache"][s] for s in STAGES} == dict.fromkeys(STAGES, LIMIT)
    assert (work / "r1" / "manifest.json").is_file()
    _run(url, "r2", f"s3://{s3_bucket}/cache")
    (page_key,) = [k for k in _keys(s3_server, s3_bucket) if k.endswith("/history.html")]
    page = s3_server.client().get_object(Bucket=s3_bucket, Key=page_key)["Body"].read().decode()
    assert "r1" in page and "r2" in page  # the series' page of the flow's history artifact

    shutil.rmtree(work)  # another machine: only the bucket holds the runs
    assert cli.main(["compare", "r1", "r2", "--results-dir", url]) == 0
    assert f"{url}/compare/" in capsys.readouterr().out
    assert any(k.startswith("runs/compare/") for k in _keys(s3_server, s3_bucket))
    shutil.rmtree(work)
    assert cli.main(["history", "--results-dir", url]) == 0
    listed = capsys.readouterr().out
    assert "r1" in listed and "r2" in listed

    s3_server.client().delete_object(Bucket=s3_bucket, Key="runs/r2/manifest.json")
    shutil.rmtree(work)
    with pytest.raises(RerunError, match="no finished run here"):
        pull_run(url, work, "r2")
    assert pull_run(url, work, "r2", required=False) is None and not (work / "r2").exists()

    for root in (tmp_path, Path.cwd()):
        assert not [p for p in root.rglob("s3:*")], root  # no local folder named like the URL
    for path in (p for p in tmp_path.rglob("*") if p.is_file() and "seaweed" not in str(p)):
        data = path.read_bytes()
        assert ACCESS_KEY.encode() not in data and SECRET_KEY.encode() not in data, path
    assert os.environ["AWS_ACCESS_KEY_ID"] == ACCESS_KEY  # taken from here, nowhere else


def test_a_full_fake_run_at_an_s3_url_matches_the_local_run_and_reruns_from_the_cache(
    harness: None,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lme_bench.run.request import RunRequest

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))

    def run(results_dir: str, cache: str) -> dict[str, Any]:
        request = RunRequest(
            config="configs/full-fake.toml",
            results_dir=results_dir,
            run_id="ff",
            limit=2,
            overrides={"cache.storage": cache},
        )
        result: dict[str, Any] = benchmark(request, return_state=True).result()
        return result

    local = run(str(tmp_path / "local"), str(tmp_path / "local-cache"))
    first = run(f"s3://{s3_bucket}/runs", f"s3://{s3_bucket}/cache")
    for name in ("scores.parquet", "hypotheses.parquet", "retrieval.parquet"):
        data = s3_server.client().get_object(Bucket=s3_bucket, Key=f"runs/ff/{name}")
        (tmp_path / name).write_bytes(data["Body"].read())
        assert _rows(tmp_path / name) == _rows(Path(local["run_dir"]) / name), name
    assert first["summary"]["qa"] == local["summary"]["qa"]
    second = run(f"s3://{s3_bucket}/runs", f"s3://{s3_bucket}/cache")
    stages = ("ingest", "retrieval", "answer", "judge")
    assert {s: second["from_cache"][s] for s in stages} == dict.fromkeys(stages, 2)


def test_a_failed_only_rerun_at_an_s3_url_redoes_just_the_failed_question_elsewhere(
    harness: None,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lme_bench_flows import command
    from lme_bench_flows.benchmark import RunFailures

    from lme_bench.run import steps
    from lme_bench.run.request import RunRequest

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    url, cache = f"s3://{s3_bucket}/runs", f"s3://{s3_bucket}/cache"
    answered: list[str] = []
    broken = {"3387bf20"}  # the second sample question's answer fails on the first run
    real = steps.answer_question

    def answer(ref: Any, *args: Any, **kwargs: Any) -> Any:
        answered.append(ref.question_id)
        if ref.question_id in broken:
            raise ValueError(f"the reader broke on {ref.question_id}")
        return real(ref, *args, **kwargs)

    monkeypatch.setattr(steps, "answer_question", answer)
    request = RunRequest(
        config="configs/full-fake.toml", results_dir=url, run_id="flaky", limit=LIMIT,
        overrides={"cache.storage": cache},
    )  # fmt: skip
    with pytest.raises(RunFailures, match="1 question") as failed:
        benchmark(request, return_state=True).result()
    assert f"results written to {url}/flaky;" in str(failed.value)
    assert f"`lme-bench rerun flaky --results-dir {url}` redoes them" in str(failed.value)
    client = s3_server.client()
    manifest = client.get_object(Bucket=s3_bucket, Key="runs/flaky/manifest.json")["Body"].read()
    assert json.loads(manifest)["failed_question_ids"] == ["3387bf20"]

    import shutil

    shutil.rmtree(tmp_path / "home-cache")  # another machine: only the bucket holds the run
    broken.clear()
    answered.clear()
    assert command.main(["rerun", "flaky", "--results-dir", url, "--failed-only"]) == 0
    assert answered == ["3387bf20"]
    manifest = client.get_object(Bucket=s3_bucket, Key="runs/flaky/manifest.json")["Body"].read()
    assert json.loads(manifest)["failed_question_ids"] == []
    data = client.get_object(Bucket=s3_bucket, Key="runs/flaky/hypotheses.parquet")["Body"].read()
    (tmp_path / "hypotheses.parquet").write_bytes(data)
    rows = pq.read_table(tmp_path / "hypotheses.parquet").to_pylist()
    assert len(rows) == LIMIT and {r["status"] for r in rows} == {"ok"}


def _memories_with_entries(work: Path) -> int:
    import sqlite3

    store = work / "memory.sqlite"
    if not store.is_file():
        return 0
    with sqlite3.connect(store) as db:
        return int(db.execute("SELECT count(DISTINCT memory_id) FROM entries").fetchone()[0])


def test_a_worker_lacking_a_raw_build_takes_it_from_the_cache_or_remakes_it_to_search(
    harness: None,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A raw ingestion's builds stay off the bucket. Another worker (its own working folder)
    takes the run from the cache without ingesting; one that must search again (the
    retrieval stage's code changed) ingests each memory again and searches it as before."""
    from lme_bench.run import cache_keys

    url, cache = f"s3://{s3_bucket}/runs", f"s3://{s3_bucket}/cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "worker-a"))
    first = _run(url, "raw", cache)
    assert not [k for k in _keys(s3_server, s3_bucket) if "memory-builds" in k]
    expected = _rows(Path(first["run_dir"]) / "retrieval.parquet")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "worker-b"))
    again = _run(url, "raw", cache)
    assert {s: again["from_cache"][s] for s in STAGES} == dict.fromkeys(STAGES, LIMIT)
    assert _memories_with_entries(Path(again["run_dir"]).parent) == 0  # nothing ingested

    digest = cache_keys.entry_code_digest
    changed = lambda entry: digest(entry) + ("-new" if entry.endswith("retrieval.stage") else "")  # noqa: E731
    monkeypatch.setattr(cache_keys, "entry_code_digest", changed)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "worker-c"))
    searched = _run(url, "raw", cache)
    assert {s: searched["from_cache"][s] for s in STAGES} == {"ingest": 0, "retrieval": 0}
    assert _memories_with_entries(Path(searched["run_dir"]).parent) == LIMIT
    pulled = pull_run(url, tmp_path / "pulled", "raw")
    assert pulled is not None
    assert _rows(pulled / "retrieval.parquet") == expected and expected
