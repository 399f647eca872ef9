"""The storage layer on local disk and on fsspec's in-memory file system: whole-object writes,
reads, listing, the manifest written last, credentials never taken from a URL or shown."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from lme_bench.results import store as store_module
from lme_bench.results.atomic import ResultsWriteError
from lme_bench.results.store import RunStore, StorageError, StorageExtraMissing


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> RunStore:
    if request.param == "local":
        return RunStore(tmp_path / "runs")
    return RunStore(f"memory://lme-{uuid4().hex}/runs")


def test_objects_are_written_read_listed_and_found(store: RunStore) -> None:
    store.put_text("run-1/summary.md", "# done\n")
    store.put_bytes("run-1/tables/scores.parquet", b"PAR1")
    store.put_text("run-2/manifest.json", "{}")
    assert store.read_text("run-1/summary.md") == "# done\n"
    assert store.read_bytes("run-1/tables/scores.parquet") == b"PAR1"
    assert store.exists("run-2/manifest.json")
    assert not store.exists("run-2/summary.md")
    assert store.names() == [
        "run-1/summary.md",
        "run-1/tables/scores.parquet",
        "run-2/manifest.json",
    ]
    assert store.names("run-1/tables") == ["run-1/tables/scores.parquet"]
    assert store.names("run-3") == []
    assert store.child("run-1").names() == ["summary.md", "tables/scores.parquet"]
    with pytest.raises(FileNotFoundError):
        store.read_bytes("run-3/manifest.json")


def test_a_rewrite_replaces_the_object_whole(store: RunStore) -> None:
    store.put_text("run-1/summary.md", "a long first version\n" * 50)
    store.put_text("run-1/summary.md", "short\n")
    assert store.read_text("run-1/summary.md") == "short\n"


def test_a_failed_local_write_leaves_the_old_file_and_no_partial_one(tmp_path: Path) -> None:
    local = RunStore(tmp_path)
    local.put_text("run-1/summary.md", "old\n")
    source = tmp_path / "missing.parquet"  # the finished file to copy is not there
    with pytest.raises(OSError):
        local.put_file("run-1/summary.md", source)
    assert local.read_text("run-1/summary.md") == "old\n"
    assert local.names() == ["run-1/summary.md"]


def test_a_published_folder_has_its_manifest_written_last(
    store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "finished"
    for name in ("manifest.json", "a.parquet", "z.md", "exports/hypotheses.jsonl"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(name)
    (folder / ".z.md.123.tmp").write_text("a write in progress")
    order: list[str] = []
    put_file = RunStore.put_file

    def recording(self: RunStore, name: str, source: Path) -> None:
        order.append(name)
        put_file(self, name, source)

    monkeypatch.setattr(RunStore, "put_file", recording)
    run = store.child("run-1")
    run.publish_folder(folder)
    assert order[-1] == "manifest.json"
    assert sorted(order) == ["a.parquet", "exports/hypotheses.jsonl", "manifest.json", "z.md"]
    assert run.read_text("exports/hypotheses.jsonl") == "exports/hypotheses.jsonl"


def test_credentials_in_a_url_are_refused_and_never_shown() -> None:
    with pytest.raises(StorageError) as caught:
        RunStore("s3://AKIAEXAMPLEKEY:very-secret-value@lme/runs")
    message = str(caught.value)
    assert "environment" in message
    assert "very-secret-value" not in message and "AKIAEXAMPLEKEY" not in message
    assert "s3://lme/runs" in message


def test_an_error_message_blanks_credentials_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-from-env")
    run = RunStore(f"memory://lme-{uuid4().hex}")

    class Refusing:
        def pipe_file(self, *args: Any, **kwargs: Any) -> None:
            raise PermissionError("signature for s3cr3t-from-env does not match")

    run._fs = Refusing()
    with pytest.raises(ResultsWriteError) as caught:
        run.put_text("run-1/manifest.json", "{}")
    assert "s3cr3t-from-env" not in str(caught.value)
    assert "run-1/manifest.json" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "extra", "module"),
    [
        ("s3://lme/runs", "s3", "s3fs"),
        ("gs://lme/runs", "gcs", "gcsfs"),
        ("az://lme", "az", "adlfs"),
    ],
)
def test_a_missing_extra_is_one_error_naming_it_and_its_install(
    url: str, extra: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        store_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == module else find_spec(name, *a),
    )
    with pytest.raises(StorageExtraMissing) as caught:
        RunStore(url)
    assert f"lme-bench[{extra}]" in str(caught.value)
    assert module in str(caught.value) and "pip install" in str(caught.value)
