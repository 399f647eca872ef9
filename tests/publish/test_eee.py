"""`lme-bench export --eee`: a run as an Every Eval Ever record, its figures those of
summary.json, nothing of this machine inside, and (slow) the schema's own validator passing it
clean."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.cli import main
from lme_bench.publish.scrub import sensitive
from lme_bench.results.qa_tables import hypotheses_table
from lme_bench.results.readback import read_hypotheses, read_scores
from lme_bench.results.store import RunStore
from tests.benchmarks.beam.samples import write_chat, write_checkout, write_questions
from tests.benchmarks.locomo.samples import listed_sample, write_json
from tests.publish.runs import copy_run, make_run
from tests.s3_server import s3_bucket, s3_server

__all__ = ["s3_bucket", "s3_server"]

EEE_VERSION = "0.3.0"


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("eee") / "results", "pub")


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("eee-locomo")
    data = write_json(folder / "locomo10.json", [listed_sample("conv-7"), listed_sample("conv-8")])
    return make_run(folder / "results", "loc", **{"dataset.path": str(data)})


@pytest.fixture(scope="module")
def beam_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BEAM run judged by the rubric judge stand-in (graded scores)."""
    folder = tmp_path_factory.mktemp("eee-beam")
    chat = write_chat(folder).parent
    write_questions(folder)
    config = folder / "beam.toml"
    config.write_text(f'[judge]\nbeam_repo = "{write_checkout(folder / "checkout")}"\n')
    return make_run(
        folder / "results",
        "beam",
        config=config,
        **{"dataset.path": str(chat), "models.judge": "fake:rubric-judge"},
    )


def _export(run: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> list[Path]:
    capsys.readouterr()
    code = main(["export", run.name, "--results-dir", str(run.parent), "--eee", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    return sorted(p for p in out.rglob("*") if p.is_file())


def _files(out: Path) -> tuple[Path, Path]:
    aggregate = next(out.rglob("*[0-9a-f].json"))
    return aggregate, aggregate.with_name(f"{aggregate.stem}_samples.jsonl")


def _by_id(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["evaluation_result_id"]: r for r in log["evaluation_results"]}


def test_the_record_holds_the_summarys_figures(
    sample_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = _export(sample_run, tmp_path / "out", capsys)
    aggregate, samples = _files(tmp_path / "out")
    assert written == sorted([aggregate, samples])
    summary = json.loads((sample_run / "summary.json").read_text())
    manifest = json.loads((sample_run / "manifest.json").read_text())
    log = json.loads(aggregate.read_text())
    results = _by_id(log)

    assert log["eval_library"] == {
        "name": "lme-bench",
        "version": manifest["code_version"],
        "additional_details": {"git_sha": manifest["git"]["sha"]},
    }
    assert log["model_info"]["id"] == "embedded/fake:quote-memory"
    details = log["model_info"]["additional_details"]
    assert details["memory_params_digest"] == summary["memory"]["params_digest"]
    assert all(isinstance(v, str) for v in details.values())
    rel = aggregate.relative_to(tmp_path / "out").parts
    assert rel[:4] == ("data", "longmemeval", "embedded", "fake_quote-memory")

    judges = summary["qa"]["judges"]
    assert len(judges) == 2  # the LLM judge and the rule-based fallback
    for judge, record in judges.items():
        groups = {g: record[g] for g in ("overall", "task_averaged", "abstention")}
        groups |= {f"per_type/{t}": f for t, f in record["per_type"].items()}
        for group, figures in groups.items():
            result = results[f"qa/{judge}/{group}"]
            assert result["score_details"]["score"] == figures["accuracy"]
            uncertainty = result["score_details"]["uncertainty"]
            assert uncertainty["num_samples"] == figures["n"]
            interval = uncertainty["confidence_interval"]
            assert [interval["lower"], interval["upper"]] == figures["ci95"]
            scoring = result["metric_config"].get("llm_scoring")
            if record["kind"] == "llm":
                assert scoring["judges"][0]["model_info"]["id"] == judge
            else:
                assert scoring is None
    for granularity in ("session", "turn"):
        for name, value in summary[granularity]["overall"].items():
            if name != "n":
                result = results[f"retrieval/{granularity}/{name}"]
                assert result["score_details"]["score"] == value
    source = log["evaluation_results"][0]["source_data"]
    assert source["additional_details"]["sha256"] == manifest["dataset"]["sha256"]

    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    verdicts = [s for s in read_scores(sample_run / "scores.parquet") if s.repeat == 0]
    assert len(lines) == len(verdicts) == log["detailed_evaluation_results"]["total_rows"]
    by_key = {(v.question_id, v.judge): v for v in verdicts}
    for line in lines:
        verdict = by_key[(line["sample_id"], line["metadata"]["judge"])]
        assert line["evaluation"]["is_correct"] is bool(verdict.label)
        assert line["model_id"] == log["model_info"]["id"]
        assert line["evaluation_id"] == log["evaluation_id"]
        assert line["evaluation_result_id"] in results
    digest = hashlib.sha256(samples.read_bytes()).hexdigest()
    assert log["detailed_evaluation_results"]["checksum"] == digest
    assert log["detailed_evaluation_results"]["file_path"] == "/".join(
        samples.relative_to(tmp_path / "out").parts
    )


def test_nothing_of_this_machine_is_written(
    sample_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _export(sample_run, tmp_path / "out", capsys)
    manifest = json.loads((sample_run / "manifest.json").read_text())
    assert manifest["dataset"]["path"].startswith("/")  # the run records absolute paths
    found = sensitive(sample_run, manifest)
    for path in _files(tmp_path / "out"):
        text = path.read_text()
        assert found.found(text) is None, path
        assert str(sample_run.parent) not in text
        assert str(Path.cwd()) not in text


def test_a_secret_in_an_answer_stops_the_export(
    sample_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    secret = "sk-export-test-0123456789abcdef"
    run = tmp_path / "results" / "pub"
    shutil.copytree(sample_run, run)
    rows = read_hypotheses(run / "hypotheses.parquet")
    rows[0].hypothesis = f"the key is {secret}"
    pq.write_table(hypotheses_table("pub", rows), run / "hypotheses.parquet")
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    capsys.readouterr()
    code = main(
        ["export", "pub", "--results-dir", str(run.parent), "--eee", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    assert "the value of the secret OPENAI_API_KEY" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").rglob("*.json*"))


@pytest.mark.slow  # a real S3 server (SeaweedFS)
def test_a_run_at_a_results_url_is_exported_as_the_same_record(
    sample_run: Path,
    s3_bucket: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    RunStore(f"s3://{s3_bucket}/runs").child("pub").publish_folder(copy_run(sample_run, tmp_path))
    _export(sample_run, tmp_path / "local", capsys)
    url = f"s3://{s3_bucket}/runs/pub"
    assert main(["export", url, "--eee", "--out", str(tmp_path / "remote")]) == 0
    local, remote = (_files(tmp_path / name) for name in ("local", "remote"))
    assert [p.relative_to(tmp_path / "local") for p in local] == [
        p.relative_to(tmp_path / "remote") for p in remote
    ]
    assert remote[1].read_bytes() == local[1].read_bytes()  # the samples, byte for byte
    figures = [_by_id(json.loads(files[0].read_text())) for files in (local, remote)]
    assert {k: r["score_details"] for k, r in figures[0].items()} == {
        k: r["score_details"] for k, r in figures[1].items()
    }


def test_a_folder_that_is_no_finished_run_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results" / "half").mkdir(parents=True)
    code = main(
        [
            "export",
            "half",
            "--results-dir",
            str(tmp_path / "results"),
            "--eee",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "summary.json" in err and "half" in err
    assert not (tmp_path / "o").exists()


def test_a_benchmarks_own_figures_are_results(
    locomo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _export(locomo_run, tmp_path / "out", capsys)
    aggregate, _ = _files(tmp_path / "out")
    results = _by_id(json.loads(aggregate.read_text()))
    section = json.loads((locomo_run / "summary.json").read_text())["locomo"]
    assert results["locomo/overall_f1"]["score_details"]["score"] == section["overall_f1"]
    for category, figures in section["categories"].items():
        result = results[f"locomo/categories/{category}/f1"]
        assert result["score_details"]["score"] == figures["f1"]
        assert result["score_details"]["uncertainty"]["num_samples"] == figures["count"]
    judged = section["llm_judge"]["overall"]
    result = results["locomo/llm_judge/overall/accuracy"]
    assert result["score_details"]["score"] == judged["accuracy"]
    assert aggregate.relative_to(tmp_path / "out").parts[1] == "locomo"


def test_a_graded_judges_scores_are_the_samples_scores(
    beam_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _export(beam_run, tmp_path / "out", capsys)
    aggregate, samples = _files(tmp_path / "out")
    results = _by_id(json.loads(aggregate.read_text()))
    section = json.loads((beam_run / "summary.json").read_text())["beam"]
    mapped = 0
    for judge, figures in section["judges"].items():
        for ability, row in figures["abilities"].items():
            if row["score"] is not None:
                result = results[f"beam/judges/{judge}/abilities/{ability}/score"]
                assert result["score_details"]["score"] == row["score"]
                assert result["score_details"]["uncertainty"]["num_samples"] == row["judged"]
                mapped += 1
        overall = results[f"beam/judges/{judge}/mean_over_abilities"]
        assert overall["score_details"]["score"] == figures["mean_over_abilities"]
    assert mapped
    assert not any(i.endswith("undefined_scores") for i in results)  # a count, not a score
    graded = {
        (s.question_id, s.judge): s.score
        for s in read_scores(beam_run / "scores.parquet")
        if s.repeat == 0 and s.score is not None
    }
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    scored = [ln for ln in lines if (ln["sample_id"], ln["metadata"]["judge"]) in graded]
    assert scored
    for line in scored:
        assert "evaluation_result_id" not in line  # no QA accuracy of a graded judge
        score = graded[(line["sample_id"], line["metadata"]["judge"])]
        assert line["evaluation"]["score"] == score
        assert line["evaluation"]["is_correct"] is (score >= 1.0)


# The schema's own validator, installed from PyPI into a Python 3.12 of its own (it needs 3.12
# and dependencies lme-bench does not pin), kept between runs.


def _python312() -> str | None:
    candidates = [os.environ.get("LME_BENCH_PYTHON312"), shutil.which("python3.12")]
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))
    for candidate in candidates:
        if (
            candidate
            and subprocess.run([candidate, "--version"], capture_output=True).returncode == 0
        ):
            return candidate
    return None


def _validator() -> list[str]:
    """The command that runs the schema's validator (validator/validate.py's `main`)."""
    return [str(_validator_venv() / "bin" / "python"), "-m", "every_eval_ever.validator.cli"]


def _validator_venv() -> Path:
    venv = Path.home() / ".cache" / "lme-bench" / f"eee-venv-{EEE_VERSION}"
    python = venv / "bin" / "python"
    probe = "import importlib.metadata as m; print(m.version('every-eval-ever'))"
    if python.exists():
        found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip() == EEE_VERSION:
            return venv
    interpreter = _python312()
    if interpreter is None:
        pytest.skip("no working python3.12 (every-eval-ever needs Python >= 3.12)")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [python, "-m", "pip", "install", "-q", f"every-eval-ever=={EEE_VERSION}"], check=True
    )
    return venv


@pytest.mark.slow
@pytest.mark.parametrize("which", ["sample_run", "locomo_run", "beam_run"])
def test_the_schemas_validator_passes_the_record_clean(
    which: str, request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    validator = _validator()
    run = request.getfixturevalue(which)
    out = tmp_path / "out"
    _export(run, out, capsys)
    files = [str(p.relative_to(out)) for p in _files(out)]
    checked = subprocess.run(
        [*validator, "--format", "json", *files], cwd=out, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    reports = json.loads(checked.stdout)
    assert [r["valid"] for r in reports] == [True, True]
    assert [r["warnings"] for r in reports] == [[], []]
    assert {r["file_type"] for r in reports} == {"aggregate", "instance"}
