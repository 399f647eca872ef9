"""`lme-bench verify`: a bundle holds when every file is as its manifest lists it, the
signature (when there is one) signs that manifest, the dataset is the run's and summary.json's
figures are what its own rows give; anything else exits 1 naming the file or the figure."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lme_bench.cli import main
from lme_bench.publish.archive import read_members
from lme_bench.publish.pack import bundle_run
from lme_bench.publish.signing import fingerprint, write_key
from tests.publish.runs import SAMPLE, flip_byte, json_of, make_run, tampered, write_members


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run's bundle signed with a new key, and the key's fingerprint."""
    folder = tmp_path_factory.mktemp("signed")
    run = make_run(folder / "results")
    key = folder / "key.pem"
    print_ = write_key(key)
    out, _ = bundle_run(run, folder / "run.bundle.tar.gz", key)
    return out, print_


def _verify(bundle: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(bundle), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _relisted(members: dict[str, bytes], *names: str) -> None:
    """BUNDLE.json made to list `names` as they now are (what a forger would do)."""
    record = json_of(members, "BUNDLE.json")
    for name in names:
        data = members[name]
        record["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    members["BUNDLE.json"] = (json.dumps(record, indent=2) + "\n").encode()
    members.pop("BUNDLE.sig", None)


def test_a_signed_bundle_verifies(
    signed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, key_print = signed
    code, said = _verify(bundle, capsys, "--dataset", str(SAMPLE), "--require-signature")
    assert code == 0, said
    assert f"fingerprint {key_print}" in said and "the run's dataset" in said
    assert "figures of summary.json, each as its rows give it" in said
    assert said.rstrip().endswith("verified")


KINDS = (
    "summary.json",
    "manifest.json",
    "hypotheses.jsonl",
    "hypotheses.jsonl.eval-results-match-judge",
    "scores.parquet",
    "retrieval.parquet",
    "report.html",
    "summary.md",
    "config.json",
)


@pytest.mark.parametrize("name", KINDS)
def test_one_changed_byte_in_any_file_fails_naming_it(
    name: str, signed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(members: dict[str, bytes]) -> None:
        members[name] = flip_byte(members[name])

    code, said = _verify(tampered(signed[0], tmp_path / "t.tar.gz", change), capsys)
    assert code == 1
    assert f"FAILED: {name}: changed (its sha256 is not BUNDLE.json's)" in said
    assert said.count("changed (its sha256") == 1


def test_an_added_or_missing_file_fails_naming_it(
    signed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def add(members: dict[str, bytes]) -> None:
        members["extra.txt"] = b"hello"

    code, said = _verify(tampered(signed[0], tmp_path / "a.tar.gz", add), capsys)
    assert code == 1 and "FAILED: extra.txt: added (not in BUNDLE.json)" in said

    def remove(members: dict[str, bytes]) -> None:
        del members["summary.md"]

    code, said = _verify(tampered(signed[0], tmp_path / "m.tar.gz", remove), capsys)
    assert code == 1 and "FAILED: summary.md: missing from the bundle" in said


def test_an_edited_figure_fails_naming_it(
    signed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Even with BUNDLE.json listing the edited file (unsigned): the rows give another figure."""

    def edit(members: dict[str, bytes]) -> None:
        summary = json_of(members, "summary.json")
        summary["session"]["overall"]["recall_all@5"] = 0.99
        members["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()
        _relisted(members, "summary.json")

    code, said = _verify(tampered(signed[0], tmp_path / "f.tar.gz", edit), capsys)
    assert code == 1
    assert "FAILED: summary.json: session.overall.recall_all@5 is 0.99; the rows give" in said
    assert "changed (its sha256" not in said  # the files are as listed: the figure is named

    def accuracy(members: dict[str, bytes]) -> None:
        summary = json_of(members, "summary.json")
        judge = summary["qa"]["judges"]["fake:match-judge"]
        judge["overall"]["correct"] += 1
        members["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()
        _relisted(members, "summary.json")

    code, said = _verify(tampered(signed[0], tmp_path / "q.tar.gz", accuracy), capsys)
    assert code == 1
    assert "qa.judges.fake:match-judge.overall.correct is" in said


def test_a_wrong_key_is_a_bad_signature(
    signed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = Ed25519PrivateKey.generate().public_key()

    def swap_key(members: dict[str, bytes]) -> None:
        record = json_of(members, "BUNDLE.sig")
        raw = other.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        record |= {"public_key": base64.b64encode(raw).decode(), "fingerprint": fingerprint(other)}
        members["BUNDLE.sig"] = json.dumps(record).encode()

    code, said = _verify(tampered(signed[0], tmp_path / "k.tar.gz", swap_key), capsys)
    assert code == 1 and "FAILED: BUNDLE.sig: bad signature" in said

    def forge(members: dict[str, bytes]) -> None:  # files and listing changed, signature kept
        members["summary.md"] += b"\nbest run ever\n"
        signature = members["BUNDLE.sig"]
        _relisted(members, "summary.md")
        members["BUNDLE.sig"] = signature

    code, said = _verify(tampered(signed[0], tmp_path / "g.tar.gz", forge), capsys)
    assert code == 1 and "FAILED: BUNDLE.sig: bad signature" in said
    assert "summary.md: changed" not in said


def test_unsigned_is_said_and_fails_only_when_a_signature_is_required(
    signed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    members = read_members(signed[0])
    del members["BUNDLE.sig"]
    write_members(tmp_path / "u.tar.gz", members)
    code, said = _verify(tmp_path / "u.tar.gz", capsys)
    assert code == 0 and "unsigned (no BUNDLE.sig)" in said
    code, said = _verify(tmp_path / "u.tar.gz", capsys, "--require-signature")
    assert code == 1 and "FAILED: BUNDLE.sig: the bundle is unsigned" in said


def test_another_dataset_fails(
    signed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_bytes(SAMPLE.read_bytes() + b"\n")
    code, said = _verify(signed[0], capsys, "--dataset", str(other))
    assert code == 1 and f"FAILED: {other}: not the run's dataset" in said


def test_not_a_bundle_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.tar.gz").write_bytes(b"not an archive")
    code, said = _verify(tmp_path / "x.tar.gz", capsys)
    assert code == 2 and "not a bundle" in said
    write_members(tmp_path / "y.tar.gz", {"a.txt": b"a"})
    code, said = _verify(tmp_path / "y.tar.gz", capsys)
    assert code == 2 and "no BUNDLE.json" in said
