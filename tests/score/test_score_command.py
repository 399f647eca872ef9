"""`lme-bench score` on LongMemEval hypotheses: bad input is one error naming the file, the line
and the field (nothing judged, nothing written); questions the file leaves out are counted,
listed and labelled, never scored; a run's own hypotheses score to the run's own rows; a 429
is retried as a run retries it; `[judge] batch` sends one job of the official bodies."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.cli import main
from lme_bench.config.settings import load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.results.readback import read_scores
from lme_bench.run.steps import bundled_sample
from tests.benchmarks.locomo.samples import listed_sample, write_json
from tests.providers.fake_batch_server import serve_batches
from tests.providers.fake_openai_server import serve
from tests.run.test_answer_judge import _run

SAMPLE = bundled_sample()
QUESTIONS = [q.instance for q in iter_questions(SAMPLE)]


def _lines(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in items))
    return path


def _answers(path: Path, count: int = len(QUESTIONS)) -> Path:
    return _lines(
        path,
        [{"question_id": q.question_id, "hypothesis": str(q.answer)} for q in QUESTIONS[:count]],
    )


def _score(
    capsys: pytest.CaptureFixture[str], file: Path, *extra: str, dataset: Path = SAMPLE
) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["score", str(file), "--dataset", str(dataset), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


GOOD = {"question_id": QUESTIONS[0].question_id, "hypothesis": "x"}
BAD_FILES = [
    (
        [GOOD, {"question_id": "nope", "hypothesis": "x"}],
        "line 2: field question_id: 'nope' is no question of",
    ),
    ([GOOD, GOOD], f"line 2: field question_id: '{GOOD['question_id']}' already on line 1"),
    ([GOOD, {"question_id": QUESTIONS[1].question_id}], "line 2: field hypothesis is missing"),
    (
        [{"question_id": QUESTIONS[1].question_id, "hypothesis": 3}],
        "line 1: field hypothesis: expected text, got 3",
    ),
    (
        [{**GOOD, "autoeval_label": {"model": "m", "label": True}}],
        "line 1: field autoeval_label: this is an official eval-results file",
    ),
    (
        [{"question_id": "q", "retrieval_results": {}}],
        "line 1: field retrieval_results.ranked_items: expected a list of ranked items",
    ),
    (
        [GOOD, {"question_id": "q", "retrieval_results": {}}],
        "line 2: field retrieval_results: this is a LongMemEval retrieval log",
    ),
]


@pytest.mark.parametrize(("items", "said"), BAD_FILES)
def test_bad_input_is_one_error_naming_the_line_and_field(
    items: list[dict[str, Any]], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _lines(tmp_path / "hypotheses.jsonl", items)
    out = tmp_path / "out"
    code, _, err = _score(capsys, file, "--judge", "fake:yes", "--out", str(out))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"lme-bench: error: {file}: {said}"), line
    assert not out.exists()


def test_not_json_lines_and_a_locomo_dataset_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "hypotheses.jsonl"
    file.write_text(json.dumps(GOOD) + "\n{oops\n")
    code, _, err = _score(capsys, file, "--judge", "fake:yes", "--out", str(tmp_path / "o"))
    assert (code, err.strip()) == (
        2,
        f"lme-bench: error: {file}: line 2: not valid JSON: Expecting property name enclosed in"
        " double quotes",
    )
    locomo = write_json(tmp_path / "locomo.json", [listed_sample()])
    code, _, err = _score(capsys, _answers(file, 2), "--judge", "fake:yes", dataset=locomo)
    assert code == 2
    assert f"{file}: a LongMemEval hypotheses file (longmemeval), but {locomo} is a locomo" in err


def test_a_run_manifest_beside_the_file_naming_another_dataset_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _answers(tmp_path / "hypotheses.jsonl", 3)
    (tmp_path / "manifest.json").write_text(json.dumps({"dataset": {"sha256": "ab" * 32}}))
    code, _, err = _score(capsys, file, "--judge", "fake:yes", "--out", str(tmp_path / "o"))
    assert code == 2
    assert f"{tmp_path / 'manifest.json'}: field dataset.sha256: the answers in" in err
    assert f"sha256 {'ab' * 32}; {SAMPLE} has sha256" in err
    assert not (tmp_path / "o").exists()


def test_missing_questions_are_counted_listed_and_left_out_of_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _answers(tmp_path / "hypotheses.jsonl", 5)
    out = tmp_path / "scored"
    code, printed, err = _score(capsys, file, "--judge", "fake:match-judge", "--out", str(out))
    assert code == 1
    missing = [q.question_id for q in QUESTIONS[5:]]
    assert f"lme-bench: {len(missing)} questions of {SAMPLE} have no answer in {file}" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["answers_file"]["missing_ids"] == missing
    assert (summary["answers_file"]["answered"], summary["answers_file"]["missing"]) == (5, 29)
    judge = summary["qa"]["judges"]["fake:match-judge"]
    assert judge["overall"]["n"] == 5  # the answered ones, none of the missing
    assert "**Missing answers**: 29 of the dataset's 34 questions have no answer" in printed
    assert "over the 5 answered questions only" in (out / "summary.md").read_text()
    assert "Missing answers" in (out / "report.html").read_text()
    scored = {r["question_id"] for r in pq.read_table(out / "scores.parquet").to_pylist()}
    assert scored == {q.question_id for q in QUESTIONS[:5]}
    lines = (out / "hypotheses.jsonl.eval-results-match-judge").read_text().splitlines()
    assert len(lines) == 5
    code, _, _ = _score(capsys, file, "--judge", "fake:yes", "--out", str(out), "--allow-missing")
    assert code == 0


SAME_BUT_TIME = {"seconds", "run_id"}


def test_a_runs_own_hypotheses_score_to_the_runs_own_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = Path("configs/full-fake.toml")
    settings = load_settings(config, **{"run.results_dir": str(tmp_path / "runs")})
    run_dir, _ = _run(settings, limit=len(QUESTIONS))
    out = tmp_path / "scored"
    code, _, err = _score(
        capsys, run_dir / "hypotheses.jsonl", "--config", str(config), "--out", str(out)
    )
    assert code == 0, err

    def rows(folder: Path) -> list[dict[str, Any]]:
        found = [asdict(s) for s in read_scores(folder / "scores.parquet")]
        kept = [
            {k: v for k, v in r.items() if k not in SAME_BUT_TIME | {"attribution"}} for r in found
        ]
        return sorted(kept, key=lambda r: (r["question_id"], r["judge"], r["repeat"]))

    assert len(rows(out)) >= len(QUESTIONS)  # an LLM verdict a question, beside the fallback's
    assert rows(out) == rows(run_dir)
    name = "hypotheses.jsonl.eval-results-match-judge"
    assert (out / name).read_bytes() == (run_dir / name).read_bytes()
    ours = json.loads((out / "summary.json").read_text())["qa"]["judges"]
    theirs = json.loads((run_dir / "summary.json").read_text())["qa"]["judges"]
    assert ours["fake:match-judge"]["per_type"] == theirs["fake:match-judge"]["per_type"]


def test_a_throttled_judge_call_is_retried_and_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    file = _answers(tmp_path / "hypotheses.jsonl", 2)
    replies = [{"status": 429, "retry_after": "0"}, {"content": "yes"}]
    monkeypatch.setenv("LAB_KEY", "sk-lab")
    with serve(replies) as (url, fake):
        config = tmp_path / "judge.toml"
        config.write_text(
            '[models]\njudge = "lab:gpt-4o-2024-08-06"\n'
            f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{url}"\n'
            'api_key_env = "LAB_KEY"\n'
        )
        code, _, err = _score(
            capsys, file, "--config", str(config), "--out", str(tmp_path / "o"), "--allow-missing"
        )
    assert code == 0, err
    assert len(fake.requests) == 3  # one throttled, then one each
    scores = [s for s in read_scores(tmp_path / "o" / "scores.parquet") if s.judge_kind == "llm"]
    assert [s.label for s in scores] == [True, True]
    assert sum(s.retries_throttled for s in scores) == 1


def test_batch_judging_sends_one_job_of_the_official_bodies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _answers(tmp_path / "hypotheses.jsonl", 6)
    with serve_batches() as (url, fake):
        config = tmp_path / "batch.toml"
        config.write_text(
            '[models]\njudge = "lab:gpt-4o-2024-08-06"\n'
            f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{url}"\n'
            "[judge]\nbatch = true\nbatch_poll_s = 0.01\n"
        )
        out = tmp_path / "o"
        code, _, err = _score(
            capsys, file, "--config", str(config), "--out", str(out), "--allow-missing"
        )
        sent = [json.loads(x) for x in fake.files["file-1"][2].splitlines()]
    assert code == 0, err
    assert not fake.chat_requests  # every verdict came from the job
    assert len(sent) == 6
    assert {tuple(line["body"]) for line in sent} == {
        ("model", "messages", "n", "temperature", "max_tokens")
    }
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["batches"]
    assert entry["requests"] == 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["qa"]["judges"]["lab:gpt-4o-2024-08-06"]["overall"]["n"] == 6


def test_a_json_array_no_format_takes_is_one_error_listing_the_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "answers.json"
    file.write_text(json.dumps([{"id": "q1", "text": "x"}]))
    code, _, err = _score(capsys, file, "--judge", "fake:yes", "--out", str(tmp_path / "o"))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"lme-bench: error: {file}: line 1: in none of the answers formats")
    for words in ("a LongMemEval hypotheses file", "LoCoMo predictions", "BEAM answers"):
        assert words in line
    assert not (tmp_path / "o").exists()
