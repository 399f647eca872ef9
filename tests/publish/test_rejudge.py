"""`lme-bench verify BUNDLE --rejudge`: the bundle's answers judged again by its own judge (an
OpenAI-compatible server on loopback, HTTP/1.1 kept alive, recording every request body as
sent), verdict by verdict against the bundle's eval-results file. The requests are byte for
byte the run's; a judge that agrees everywhere verifies; one that flips verdicts fails with the
agreement, Cohen's kappa, both accuracies and the differing ids; a judge set up otherwise than
the bundle's sends nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lme_bench.cli import main
from lme_bench.dataset.loader import iter_questions
from lme_bench.publish.pack import bundle_run
from tests.providers.fake_batch_server import FakeBatchJobApi, serve_batches
from tests.providers.fake_openai_server import serve
from tests.publish.runs import SAMPLE, flip_byte, make_run, tampered

JUDGE = "lab:gpt-4o-2024-08-06"
EVAL_RESULTS = "hypotheses.jsonl.eval-results-gpt-4o"
KEY = "LAB_REJUDGE_KEY"
QUESTIONS = 8
TEXTS = {q.instance.question: q.instance.question_id for q in iter_questions(SAMPLE)}


def _asked(body: dict[str, Any]) -> str:
    """The id of the sample question a judge prompt is about (its longest question text in
    the prompt, so a question quoted inside another's text cannot be taken for it)."""
    (message,) = body["messages"]
    prompt = message["content"]
    found = [text for text in TEXTS if text in prompt]
    assert found, prompt
    return TEXTS[max(found, key=len)]


def judge_saying_no_to(ids: set[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": "no" if _asked(body) in ids else "yes"}

    return reply


def _provider(path: Path, url: str) -> Path:
    path.write_text(
        f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{url}"\napi_key_env = "{KEY}"\n'
    )
    return path


@dataclass(frozen=True)
class Judged:
    bundle: Path
    ids: list[str]  # the run's questions, in its order
    said_no: set[str]  # the questions its judge said no to
    bodies: list[bytes]  # every judge request of the run, as sent


@pytest.fixture(scope="module", autouse=True)
def _key() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY, "sk-rejudge-test")
        yield


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, _key: None) -> Judged:
    """A run of the sample judged by JUDGE on loopback, bundled."""
    folder = tmp_path_factory.mktemp("rejudge")
    ids = [q.instance.question_id for q in iter_questions(SAMPLE)][:QUESTIONS]
    said_no = {ids[0], ids[1]}
    with serve([judge_saying_no_to(said_no)]) as (url, fake):
        config = _provider(folder / "run.toml", url)
        judge = {"models.judge": JUDGE}
        run = make_run(folder / "results", limit=QUESTIONS, config=config, **judge)
        bodies = list(fake.raw)
    bundle, _ = bundle_run(run, folder / "run.bundle.tar.gz")
    assert len(bodies) == QUESTIONS  # one call a question: the run's own judge stage
    return Judged(bundle, ids, said_no, bodies)


def _verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["verify", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _rejudge(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    bundle: Path,
    says_no: set[str],
    *extra: str,
    config_lines: str = "",
) -> tuple[int, str, str, list[bytes]]:
    with serve([judge_saying_no_to(says_no)]) as (url, fake):
        config = _provider(tmp_path / "rejudge.toml", url)
        config.write_text(config.read_text() + config_lines)
        code, out, err = _verify(
            capsys, str(bundle), "--dataset", str(SAMPLE), "--rejudge", "--config", str(config),
            *extra,
        )  # fmt: skip
        return code, out, err, list(fake.raw)


def test_the_same_judge_agrees_and_is_sent_the_runs_bodies_byte_for_byte(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err, bodies = _rejudge(capsys, tmp_path, judged.bundle, judged.said_no)
    assert code == 0, out + err
    assert sorted(bodies) == sorted(judged.bodies)  # the same official body, question by question
    assert {frozenset(json.loads(b)) for b in bodies} == {
        frozenset({"model", "messages", "n", "temperature", "max_tokens"})
    }
    assert (
        f"ok: judged again by {JUDGE}: 8 of 8 verdicts agree (100.0%), Cohen's kappa 1.000,"
        " accuracy 75.0% rejudged vs 75.0% in the bundle\n"
    ) in out
    assert out.rstrip().endswith("verified") and "FAILED" not in err


def _kappa(bundle: list[bool], again: list[bool]) -> float:
    n = len(bundle)
    observed = sum(a == b for a, b in zip(bundle, again, strict=True)) / n
    yes_b, yes_a = sum(bundle) / n, sum(again) / n
    chance = yes_b * yes_a + (1 - yes_b) * (1 - yes_a)
    return (observed - chance) / (1 - chance)


def test_a_judge_that_flips_verdicts_fails_naming_the_figures_and_the_questions(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flipped = {judged.ids[1], judged.ids[2], judged.ids[3]}
    says_no = judged.said_no ^ flipped  # ids[0], ids[2], ids[3]
    code, out, err, bodies = _rejudge(capsys, tmp_path, judged.bundle, says_no)
    assert code == 1, out + err
    assert sorted(bodies) == sorted(judged.bodies)
    bundle = [q not in judged.said_no for q in judged.ids]
    again = [q not in says_no for q in judged.ids]
    kappa = _kappa(bundle, again)
    assert -1 < kappa < 1
    (line,) = [x for x in err.splitlines() if "--rejudge" in x]
    assert line == (
        f"FAILED: --rejudge: judge {JUDGE}: agreement below --min-agreement 95.0%: 5 of 8"
        f" verdicts agree (62.5%), Cohen's kappa {kappa:.3f}, accuracy 62.5% rejudged vs 75.0%"
        f" in the bundle; differing: {', '.join(sorted(flipped))}"
    )
    assert out.rstrip().endswith("not verified: 1 problem(s)")
    code, out, err, _ = _rejudge(
        capsys, tmp_path, judged.bundle, says_no, "--min-agreement", "0.6"
    )  # the bar lowered below the agreement: the same figures hold
    assert code == 0, out + err
    assert f"ok: judged again by {JUDGE}: 5 of 8 verdicts agree (62.5%)" in out


def test_rejudge_without_a_dataset_is_one_clear_error(
    judged: Judged, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _verify(capsys, str(judged.bundle), "--rejudge")
    assert code == 2 and not out
    assert err.strip() == (
        "lme-bench: error: --rejudge needs --dataset DATA: the dataset file the bundle's answers"
        " are judged against"
    )
    with pytest.raises(SystemExit) as exited:  # argparse's own error, before anything is read
        main(["verify", str(judged.bundle), "--min-agreement", "1.5"])
    assert exited.value.code == 2
    assert "argument --min-agreement: expected a fraction from 0 to 1, got '1.5'" in (
        capsys.readouterr().err
    )


def test_a_judge_with_other_prompts_is_named_and_sent_nothing(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for name in ("default", "abstention"):
        (prompts / f"{name}.txt").write_text("Q {question} A {answer} R {response} yes or no?")
    (prompts / "VERSION").write_text("mine-1\n")
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, judged.bundle, set(), config_lines=f'[judge]\nprompts_dir = "{prompts}"\n'
    )
    assert code == 1, out + err
    assert not bodies
    assert (
        f"FAILED: --rejudge: judge {JUDGE}: the bundle's prompts are version"
        " 'lme-bench-judge-v2', these 'mine-1'"
    ) in err


def test_a_bundle_that_does_not_hold_is_not_judged_again(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(members: dict[str, bytes]) -> None:
        members[EVAL_RESULTS] = flip_byte(members[EVAL_RESULTS])

    bad = tampered(judged.bundle, tmp_path / "bad.tar.gz", change)
    code, out, err, bodies = _rejudge(capsys, tmp_path, bad, judged.said_no)
    assert code == 1 and not bodies
    assert f"FAILED: {EVAL_RESULTS}: changed" in err
    assert "not checked: --rejudge: not judged again, as the bundle does not hold" in out


def test_both_judges_of_a_run_are_judged_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path / "results", limit=4, **{"judge.second_model": "fake:yes"})
    bundle, _ = bundle_run(run, tmp_path / "two.bundle.tar.gz")
    code, out, err = _verify(capsys, str(bundle), "--dataset", str(SAMPLE), "--rejudge")
    assert code == 0, out + err
    for judge, accuracy in (("fake:match-judge", "0.0%"), ("fake:yes", "100.0%")):
        assert (
            f"ok: judged again by {judge}: 4 of 4 verdicts agree (100.0%), Cohen's kappa"
            f" undefined (one label only), accuracy {accuracy} rejudged vs {accuracy} in the"
            " bundle\n"
        ) in out


def test_a_question_the_judge_fails_on_is_named_and_fails_the_bundle(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = judged.ids[4]
    answer = judge_saying_no_to(judged.said_no)

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"status": 400, "message": "refused"} if _asked(body) == refused else answer(body)

    with serve([reply]) as (url, _):
        config = _provider(tmp_path / "rejudge.toml", url)
        code, out, err = _verify(
            capsys, str(judged.bundle), "--dataset", str(SAMPLE), "--rejudge", "--config",
            str(config),
        )  # fmt: skip
    assert code == 1, out + err
    assert f"FAILED: --rejudge: judging failed for 1 question(s): {refused}\n" in err
    assert (
        f"FAILED: --rejudge: judge {JUDGE}: 1 question(s) judged by one side only ({refused});"
        " 7 of 7 verdicts agree (100.0%)"
    ) in err
    assert out.rstrip().endswith("not verified: 2 problem(s)")


def test_a_rejudge_through_the_batch_api_sends_the_runs_bodies_in_one_job(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = judge_saying_no_to(judged.said_no)
    api = FakeBatchJobApi(lambda body: str(answer(body)["content"]))
    with serve_batches(api) as (url, fake):
        config = _provider(tmp_path / "batch.toml", url)
        config.write_text(config.read_text() + "[judge]\nbatch = true\nbatch_poll_s = 0.01\n")
        code, out, err = _verify(
            capsys, str(judged.bundle), "--dataset", str(SAMPLE), "--rejudge", "--config",
            str(config),
        )  # fmt: skip
        (job,) = [content for _, purpose, content in fake.files.values() if purpose == "batch"]
    assert code == 0, out + err
    assert not fake.chat_requests  # every verdict came from the job

    def same_order(body: dict[str, Any]) -> str:  # a job line keeps the body in its own order
        return json.dumps(body, sort_keys=True)

    sent = sorted(same_order(json.loads(line)["body"]) for line in job.splitlines())
    assert sent == sorted(same_order(json.loads(b)) for b in judged.bodies)
    assert f"ok: judged again by {JUDGE}: 8 of 8 verdicts agree (100.0%)" in out
