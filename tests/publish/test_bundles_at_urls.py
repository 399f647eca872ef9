"""`bundle`, `verify` and `leaderboard` at URLs of a real S3 server (SeaweedFS on loopback,
tests/s3_server.py): a run at a results URL bundled straight into the bucket, the bundle
verified there (signed too), a tampered or missing one named by its URL, a URL carrying
credentials refused without showing them, and a leaderboard of a bucket's folder of bundles."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from lme_bench.cli import main
from lme_bench.publish.signing import write_key
from lme_bench.results.store import RunStore
from tests.publish.runs import copy_run, flip_byte, make_run, tampered
from tests.s3_server import S3Server, s3_bucket, s3_server

__all__ = ["s3_bucket", "s3_server"]
pytestmark = pytest.mark.slow  # a real S3 server (SeaweedFS)

RUN_ID = "pub"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("results"), RUN_ID)


@pytest.fixture
def at_url(finished: Path, s3_bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The finished run published to `s3://<bucket>/runs/pub` as a run at a results URL is
    (its manifest last); this test's working folders and current folder under tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    run = copy_run(finished, tmp_path / "copy")
    RunStore(f"s3://{s3_bucket}/runs").child(RUN_ID).publish_folder(run)
    return f"s3://{s3_bucket}/runs/{RUN_ID}"


def _object(s3: S3Server, url: str) -> bytes:
    bucket, _, key = url.removeprefix("s3://").partition("/")
    body: bytes = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return body


def _put(s3: S3Server, url: str, data: bytes) -> None:
    bucket, _, key = url.removeprefix("s3://").partition("/")
    s3.client().put_object(Bucket=bucket, Key=key, Body=data)


def test_a_run_at_a_url_bundled_into_the_bucket_and_verified_there(
    at_url: str,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = f"s3://{s3_bucket}/bundles/{RUN_ID}.bundle.tar.gz"
    assert main(["bundle", at_url, "--out", out]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out}: ") and f"of run {RUN_ID} (unsigned)" in said, said
    with tarfile.open(fileobj=io.BytesIO(_object(s3_server, out)), mode="r:gz") as archive:
        names = set(archive.getnames())
        listed = archive.extractfile("BUNDLE.json")
        assert listed is not None
        record = json.loads(listed.read())
    on_store = {n.removeprefix(f"{RUN_ID}/") for n in RunStore(f"s3://{s3_bucket}/runs").names()}
    assert names - {"BUNDLE.json"} == set(record["files"]) == on_store
    assert not list(tmp_path.glob("*.tar.gz"))  # nothing left here: it went to the bucket

    assert main(["verify", out]) == 0
    said = capsys.readouterr().out
    assert said.splitlines()[-1] == "verified" and f"ok: {len(on_store)} files" in said, said

    # the run id under a results URL, signed, and the signature required at the URL
    key = tmp_path / "key.pem"
    write_key(key)
    signed = f"s3://{s3_bucket}/bundles/signed.tar.gz"
    results = at_url.rpartition("/")[0]
    assert (
        main(["bundle", RUN_ID, "--results-dir", results, "--sign", str(key), "--out", signed]) == 0
    )
    assert "(signed)" in capsys.readouterr().out
    assert main(["verify", signed, "--require-signature"]) == 0
    assert "ok: signed by the Ed25519 key" in capsys.readouterr().out


def test_verify_at_a_url_names_what_fails(
    at_url: str,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = f"s3://{s3_bucket}/bundles/good.tar.gz"
    assert main(["bundle", at_url, "--out", good]) == 0
    capsys.readouterr()
    local = tmp_path / "good.tar.gz"
    local.write_bytes(_object(s3_server, good))

    def change(members: dict[str, bytes]) -> None:
        members["scores.parquet"] = flip_byte(members["scores.parquet"])

    bad = f"s3://{s3_bucket}/bundles/bad.tar.gz"
    _put(s3_server, bad, tampered(local, tmp_path / "bad.tar.gz", change).read_bytes())
    assert main(["verify", bad]) == 1
    failed = capsys.readouterr()
    assert "FAILED: scores.parquet: changed" in failed.err
    assert failed.out.splitlines()[-1].startswith("not verified")

    missing = f"s3://{s3_bucket}/bundles/nothing.tar.gz"
    assert main(["verify", missing]) == 2
    assert capsys.readouterr().err == f"lme-bench: error: {missing}: no such bundle\n"

    _put(s3_server, f"s3://{s3_bucket}/bundles/junk.tar.gz", b"not an archive")
    assert main(["verify", f"s3://{s3_bucket}/bundles/junk.tar.gz"]) == 2
    assert "junk.tar.gz: not a bundle (a tar.gz archive)" in capsys.readouterr().err

    absent = f"s3://{s3_bucket}/runs/absent"
    assert main(["bundle", absent, "--out", f"s3://{s3_bucket}/bundles/absent.tar.gz"]) == 2
    assert f"{absent}: no finished run here" in capsys.readouterr().err
    assert main(["bundle", "keygen", "--out", f"s3://{s3_bucket}/key.pem"]) == 2
    assert "a local file, not a URL" in capsys.readouterr().err

    secret = "not-a-real-secret-9d1e"
    for args in (
        ["verify", f"s3://someone:{secret}@{s3_bucket}/bundles/good.tar.gz"],
        ["bundle", at_url, "--out", f"s3://someone:{secret}@{s3_bucket}/bundles/x.tar.gz"],
    ):
        assert main(args) == 2
        said = capsys.readouterr()
        assert "credentials in the URL" in said.err and secret not in said.err + said.out


def test_a_leaderboard_of_bundles_at_a_url(
    at_url: str,
    s3_server: S3Server,
    s3_bucket: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = f"s3://{s3_bucket}/board"
    assert main(["bundle", at_url, "--out", f"{folder}/{RUN_ID}.bundle.tar.gz"]) == 0
    _put(s3_server, f"{folder}/junk.tar.gz", b"not an archive")
    _put(s3_server, f"{folder}/notes.txt", b"not a bundle by its name: left out")
    _put(s3_server, f"{folder}/older/other.tar.gz", b"in a folder below: left out")
    capsys.readouterr()
    site = tmp_path / "site"
    assert main(["leaderboard", folder, "--out", str(site)]) == 0
    said = capsys.readouterr()
    assert "1 bundle(s) in 1 table(s), 1 verified, 1 unreadable" in said.out, said
    data = json.loads((site / "leaderboard.json").read_text())
    (table,) = data["tables"]
    (row,) = table["rows"]
    assert row["bundle"] == f"{RUN_ID}.bundle.tar.gz" and row["verified"] is True
    assert (site / f"{RUN_ID}.bundle.report.html").is_file()
    assert [u["file"] for u in data["unread"]] == ["junk.tar.gz"]
    assert s3_bucket not in data["unread"][0]["reason"]  # named by file name, as locally

    assert main(["leaderboard", f"s3://{s3_bucket}/empty", "--out", str(tmp_path / "s2")]) == 2
    assert f"s3://{s3_bucket}/empty: no bundles (*.tar.gz) here" in capsys.readouterr().err
