"""`lme-bench bundle`: a finished run in one archive, every file listed with its sha256 and
size beside the dataset's sha256, the code version and the judges' prompts and request shapes;
nothing of this machine inside (its paths rewritten in JSON and the recorded ones in text,
anything else fails naming the file); unfinished runs refused."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.cli import main
from lme_bench.publish.archive import read_members
from lme_bench.publish.errors import PublishError
from lme_bench.publish.pack import bundle_run
from lme_bench.publish.signing import write_key
from tests.publish.runs import SAMPLE, copy_run, make_run


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("results"))


def test_the_bundle_lists_every_file_with_its_digest(finished: Path, tmp_path: Path) -> None:
    out = tmp_path / "b.tar.gz"
    code = main(["bundle", finished.name, "--results-dir", str(finished.parent), "--out", str(out)])
    assert code == 0 and out.is_file()
    members = read_members(out)
    record = json.loads(members["BUNDLE.json"])
    on_disk = {p.relative_to(finished).as_posix() for p in finished.rglob("*") if p.is_file()}
    assert set(record["files"]) == on_disk == set(members) - {"BUNDLE.json"}
    assert {"hypotheses.jsonl", "hypotheses.jsonl.eval-results-match-judge", "scores.parquet",
            "summary.json", "summary.md", "report.html", "config.json"} <= on_disk  # fmt: skip
    for name, digest in record["files"].items():
        assert digest == {"sha256": hashlib.sha256(members[name]).hexdigest(),
                          "bytes": len(members[name])}  # fmt: skip
    manifest = json.loads((finished / "manifest.json").read_text())
    assert record["dataset"]["sha256"] == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert record["dataset"]["name"] == SAMPLE.name
    assert record["code_version"] == manifest["code_version"]
    judge = record["judges"]["fake:match-judge"]
    assert judge["request"] == manifest["models"]["judge_requests"]["fake:match-judge"]
    # The yes/no judge's record as bundles have always held it; no own judge's requests.
    assert judge["request"] == {
        "family": "fake",
        "endpoint": "in process (no request)",
        "body": {
            "model": "match-judge",
            "messages": [{"role": "user", "content": "<prompt>"}],
            "temperature": 0.0,
            "max_tokens": 10,
        },
        "differs_from_official": "the scripted fake model: nothing is sent",
    }
    assert set(judge) == {"kind", "prompt_version", "prompt_sha256", "request"}
    assert judge["kind"] == "llm" and "own_judge_requests" not in manifest["models"]
    assert judge["prompt_sha256"] and judge["prompt_version"] == "lme-bench-judge-v2"
    assert record["prompts"] == manifest["prompts"]
    # The parquet tables go in as the run wrote them.
    assert members["scores.parquet"] == (finished / "scores.parquet").read_bytes()


def test_no_path_of_this_machine_is_inside(finished: Path, tmp_path: Path) -> None:
    out, _ = bundle_run(finished, tmp_path / "b.tar.gz")
    members = read_members(out)
    here = [str(finished.parent.resolve()), str(SAMPLE.parent), str(Path.cwd()), str(Path.home())]
    for name, data in members.items():
        text = data.decode("latin-1")
        assert not [p for p in here if p in text], name
    manifest = json.loads(members["manifest.json"])
    assert manifest["config"]["run"]["results_dir"] == "<results-dir>"
    assert manifest["dataset"]["path"] == "<dataset-dir>/longmemeval_sample.json"
    assert "&lt;dataset-dir&gt;/longmemeval_sample.json" in members["report.html"].decode()
    assert "<dataset-dir>/longmemeval_sample.json" in members["summary.md"].decode()


def _fails_naming(run_dir: Path, out: Path, name: str, what: str) -> None:
    with pytest.raises(PublishError, match=rf"^{name}: holds {what}"):
        bundle_run(run_dir, out)
    assert not out.exists() and not list(out.parent.glob(".*.tmp"))


def test_a_report_naming_a_path_of_this_machine_fails(finished: Path, tmp_path: Path) -> None:
    run = copy_run(finished, tmp_path / "results")
    report = run / "report.html"
    report.write_text(report.read_text() + f"<p>{Path.cwd() / 'notes.txt'}</p>")
    _fails_naming(run, tmp_path / "b.tar.gz", r"report\.html", "the absolute path")


def test_a_table_naming_a_path_of_this_machine_fails(finished: Path, tmp_path: Path) -> None:
    run = copy_run(finished, tmp_path / "results")
    table = pq.read_table(run / "hypotheses.parquet")
    errors = [f"could not read {Path.home() / 'x.txt'}"] * table.num_rows
    column = table.schema.get_field_index("error")
    pq.write_table(table.set_column(column, "error", [errors]), run / "hypotheses.parquet")
    _fails_naming(run, tmp_path / "b.tar.gz", r"hypotheses\.parquet", "the absolute path")


def test_a_secret_of_the_environment_fails(
    finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = copy_run(finished, tmp_path / "results")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop")
    summary = run / "summary.md"
    summary.write_text(summary.read_text() + "\n401: key sk-test-abcdefghijklmnop\n")
    _fails_naming(
        run, tmp_path / "b.tar.gz", r"summary\.md", "the value of the secret OPENAI_API_KEY"
    )
    # in a JSON file too: its paths are rewritten, a secret never is
    summary.write_text(summary.read_text().replace("sk-test-abcdefghijklmnop", ""))
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "note": "sk-test-abcdefghijklmnop"}))
    _fails_naming(run, tmp_path / "b.tar.gz", r"config\.json", "the value of the secret")


def test_the_host_name_fails(finished: Path, tmp_path: Path) -> None:
    run = copy_run(finished, tmp_path / "results")
    report = run / "report.html"
    report.write_text(report.read_text() + f"<p>ran on {socket.gethostname()}</p>")
    _fails_naming(run, tmp_path / "b.tar.gz", r"report\.html", "the host name")


def test_an_unfinished_or_failed_run_is_refused(finished: Path, tmp_path: Path) -> None:
    run = copy_run(finished, tmp_path / "results")
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "failed_question_ids": ["q1"]}))
    with pytest.raises(PublishError, match=r"the run failed on 1 question\(s\) \(q1\); rerun"):
        bundle_run(run, tmp_path / "b.tar.gz")
    (run / "manifest.json").unlink()
    with pytest.raises(PublishError, match=r"unfinished \(no manifest\.json\)"):
        bundle_run(run, tmp_path / "b.tar.gz")
    code = main(["bundle", "nowhere", "--results-dir", str(tmp_path), "--out", str(tmp_path / "c")])
    assert code == 2 and not (tmp_path / "c").exists()


def test_keygen_makes_a_private_key_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "key.pem"
    assert main(["bundle", "keygen", "--out", str(key)]) == 0
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert os.stat(key).st_mode & 0o077 == 0
    fingerprint = capsys.readouterr().out.split("fingerprint ")[1].strip()
    assert len(fingerprint) == 64
    assert main(["bundle", "keygen", "--out", str(key)]) == 2
    assert "exists" in capsys.readouterr().err
    with pytest.raises(PublishError, match="exists"):
        write_key(key)


def test_a_checkout_the_settings_name_becomes_its_settings_placeholder(
    finished: Path, tmp_path: Path
) -> None:
    run = copy_run(finished, tmp_path / "results")
    checkout = tmp_path / "elsewhere" / "BEAM"
    for name, key in (("manifest.json", "config"), ("config.json", "settings")):
        record = json.loads((run / name).read_text())
        record[key]["judge"]["beam_repo"] = str(checkout)
        (run / name).write_text(json.dumps(record))
    out, _ = bundle_run(run, tmp_path / "b.tar.gz")
    members = read_members(out)
    assert not [n for n, data in members.items() if str(checkout) in data.decode("latin-1")]
    manifest = json.loads(members["manifest.json"])
    assert manifest["config"]["judge"]["beam_repo"] == "<judge.beam_repo>"
    assert json.loads(members["config.json"])["settings"]["judge"]["beam_repo"] == (
        "<judge.beam_repo>"
    )
