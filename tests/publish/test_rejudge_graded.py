"""`lme-bench verify BUNDLE --rejudge` on a BEAM bundle: its answers (one file per chat) scored
again by its own rubric judge, an OpenAI-compatible server on loopback (HTTP/1.1 kept alive,
recording every request) that scores BEAM's rubric prompts (a stand-in checkout's) by the rubric
item they name. The same judge gives every score again and is sent the run's requests; one
scoring some items otherwise fails with the fraction of equal scores, the mean difference, both
means and the ids; a checkout whose prompt file differs, or a bundle made before the prompts'
digests were recorded, is named and nothing is sent."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lme_bench.builtin_benchmarks.beam.judge_stage import BEAM_JUDGE_MAX_TOKENS
from lme_bench.cli import main
from lme_bench.publish.archive import read_members
from lme_bench.publish.pack import bundle_run
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.results.readback import read_scores
from tests.benchmarks.beam.samples import QUESTIONS as QUESTIONS_OF_SAMPLE
from tests.benchmarks.beam.samples import write_chat, write_checkout, write_questions
from tests.providers.fake_openai_server import serve
from tests.publish.runs import json_of, make_run, tampered
from tests.publish.test_verify import _relisted

JUDGE = "lab:gpt-4o-2024-08-06"
KEY = "LAB_BEAM_REJUDGE_KEY"
CHATS = (3, 4)  # two chats of the 100K tier: two answers files in the bundle
QUESTIONS = 10  # every probing question of both
PROMPTS_FILE = Path("src") / "prompts.py"
METRICS_FILE = Path("src") / "evaluation" / "compute_metrics.py"
FAST = "LLM response should state: fast"  # information_extraction[0]'s second item
TABLE = "LLM response should contain: a table"  # instruction_following[0]'s only item

Reply = Callable[[dict[str, Any]], dict[str, Any]]


def rubric_judge(zero: frozenset[str] = frozenset()) -> Reply:
    """Scores a rubric item 1, or 0 for the items in `zero`; to an equivalence question (a
    system message first) says yes when the reference event's first word is in the line."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if messages[0]["role"] == "system":
            found = re.fullmatch(r"A: (.*) \| B: (.*)", messages[1]["content"], re.DOTALL)
            assert found, messages
            item, line = found.groups()
            return {"content": "YES" if item.split()[0].lower() in line.lower() else "NO"}
        (message,) = messages
        item = re.search(r"^item: (.*)$", message["content"], re.MULTILINE)
        assert item, message["content"]
        score = 0 if item.group(1) in zero else 1
        return {"content": json.dumps({"score": score, "reason": "by item"})}

    return reply


@dataclass(frozen=True)
class Bundled:
    bundle: Path
    chats: Path  # the dataset: the tier's folder
    checkout: Path
    scores: dict[str, float]  # question id -> the bundle's score
    ids: dict[str, list[str]]  # ability -> its questions' ids (information_extraction: [0]'s)
    bodies: list[bytes]  # every judge request of the run, as sent
    requests: list[dict[str, Any]]  # the same, parsed


@pytest.fixture(scope="module", autouse=True)
def _key() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY, "sk-beam-rejudge-test")
        yield


def _config(path: Path, url: str, checkout: Path) -> Path:
    path.write_text(
        f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{url}"\n'
        f'api_key_env = "{KEY}"\n[judge]\nbeam_repo = "{checkout}"\n'
    )
    return path


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory, _key: None) -> Bundled:
    """A BEAM run of two chats judged by JUDGE on loopback, bundled."""
    folder = tmp_path_factory.mktemp("beam-rejudge")
    for number in CHATS:
        write_chat(folder, number=number)
        write_questions(folder, number=number, data=_asked_in(number))
    chats = folder / "chats" / "100K"
    checkout = write_checkout(folder / "checkout")
    with serve([rubric_judge()]) as (url, fake):
        config = _config(folder / "run.toml", url, checkout)
        run = make_run(
            folder / "results", "beam", limit=QUESTIONS, config=config,
            **{"dataset.path": str(chats), "models.judge": JUDGE},
        )  # fmt: skip
        bodies, requests = list(fake.raw), list(fake.requests)
    bundle, _ = bundle_run(run, folder / "beam.bundle.tar.gz")
    answers = [f"beam/100K/{n}/results-lme-bench.json" for n in CHATS]
    assert set(answers) <= set(read_members(bundle))
    summary = json_of(read_members(bundle), "summary.json")
    assert summary["beam"]["judges"][JUDGE]["judged"] == QUESTIONS
    rows = read_scores(run / "scores.parquet")
    assert {r.judge for r in rows} == {JUDGE} and len(rows) == QUESTIONS
    scores = {r.question_id: r.score for r in rows if r.score is not None}
    return Bundled(bundle, chats, checkout, scores, _ids(rows), bodies, requests)


def _asked_in(number: int) -> dict[str, list[dict[str, Any]]]:
    """The sample's probing questions, worded for chat `number` (a chat is found by its
    questions' text)."""
    return {
        ability: [{**q, "question": f"{q['question']} (chat {number})"} for q in items]
        for ability, items in QUESTIONS_OF_SAMPLE.items()
    }


def _ids(rows: list[ScoreRow]) -> dict[str, list[str]]:
    """By ability, its questions' ids, sorted; information_extraction's first questions (two
    rubric items) only."""
    ids: dict[str, list[str]] = {}
    for row in sorted(rows, key=lambda r: r.question_id):
        items = len(json.loads(row.raw_verdict)["item_scores"])
        if row.question_type != "information_extraction" or items == 2:
            ids.setdefault(row.question_type, []).append(row.question_id)
    return ids


def _rejudge(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    bundle: Path,
    judge: Reply,
    checkout: Path,
    dataset: Path,
    *extra: str,
) -> tuple[int, str, str, list[bytes]]:
    with serve([judge]) as (url, fake):
        config = _config(tmp_path / "rejudge.toml", url, checkout)
        capsys.readouterr()
        code = main(
            ["verify", str(bundle), "--dataset", str(dataset), "--rejudge",
             "--config", str(config), *extra]
        )  # fmt: skip
        captured = capsys.readouterr()
        return code, captured.out, captured.err, list(fake.raw)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_run_and_its_bundle_record_the_digests_its_own_judge_read(
    bundled: Bundled, tmp_path: Path
) -> None:
    digests = {
        "prompts": _digest(bundled.checkout / PROMPTS_FILE),
        "metrics": _digest(bundled.checkout / METRICS_FILE),
    }
    members = read_members(bundled.bundle)
    assert json_of(members, "manifest.json")["prompts"]["own_judge"] == {"beam": digests}
    assert json_of(members, "BUNDLE.json")["prompts"]["own_judge"] == {"beam": digests}
    # A benchmark judged by yes/no verdicts has no judge of its own to record.
    longmemeval = make_run(tmp_path / "results", "lme")
    assert "own_judge" not in json.loads((longmemeval / "manifest.json").read_text())["prompts"]


def test_the_run_and_its_bundle_record_the_request_its_own_judge_sent(
    bundled: Bundled, tmp_path: Path
) -> None:
    members = read_members(bundled.bundle)
    models = json_of(members, "manifest.json")["models"]
    (recorded,) = models["own_judge_requests"]["beam"].values()
    assert models["own_judge_requests"] == {"beam": {JUDGE: recorded}}
    assert models["judge_requests"] == {}  # no question was sent the yes/no request
    assert recorded["family"] == "beam-judge"
    assert recorded["endpoint"] == "POST /chat/completions"
    # Every request the server received (rubric items, event ordering's equivalence questions
    # with their system text) is the recorded body and its messages, field by field.
    assert len(bundled.requests) > QUESTIONS
    assert any(r["messages"][0]["role"] == "system" for r in bundled.requests)
    for request in bundled.requests:
        sent = {k: v for k, v in request.items() if k != "messages"}
        assert sent == recorded["body"]
        assert sent["model"] == "gpt-4o-2024-08-06"
        assert sent["max_tokens"] == BEAM_JUDGE_MAX_TOKENS
        assert sent["temperature"] == 0 and sent["stream"] is False
    judge = json_of(members, "BUNDLE.json")["judges"][JUDGE]
    # summary.json's `qa` holds no record of this judge: its prompts are its score rows'
    scores = tmp_path / "scores.parquet"
    scores.write_bytes(members["scores.parquet"])
    rubric = {r.prompt_sha256 for r in read_scores(scores) if r.judge == JUDGE}
    assert len(rubric) == 1
    assert judge == {
        "kind": "llm",
        "prompt_version": "beam-official",
        "prompt_sha256": sorted(rubric),
        "request": None,
        "own_judge_requests": {"beam": recorded},
    }
    assert "own_judge_requests" not in json_of(members, "BUNDLE.json")["models"]


def test_a_bundle_whose_recorded_request_was_edited_is_named_and_sent_nothing(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edited(members: dict[str, bytes]) -> None:
        record = json_of(members, "BUNDLE.json")
        request = record["judges"][JUDGE]["own_judge_requests"]["beam"]
        request["body"]["max_tokens"] = 10
        members["BUNDLE.json"] = (json.dumps(record, indent=2) + "\n").encode()

    bundle = tampered(bundled.bundle, tmp_path / "edited.tar.gz", edited)
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, bundle, rubric_judge(), bundled.checkout, bundled.chats
    )
    assert code == 1, out + err
    assert not bodies
    models = json_of(read_members(bundled.bundle), "manifest.json")["models"]
    sent = models["own_judge_requests"]["beam"][JUDGE]
    claimed = {**sent, "body": {**sent["body"], "max_tokens": 10}}
    assert err.splitlines() == [
        f"FAILED: --rejudge: judge {JUDGE}: the bundle's request shape for its beam questions"
        f" is {json.dumps(claimed, sort_keys=True)}; this lme-bench sends"
        f" {json.dumps(sent, sort_keys=True)}"
    ]


def test_the_same_judge_gives_every_score_again_from_the_runs_requests(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, bundled.bundle, rubric_judge(), bundled.checkout, bundled.chats
    )
    assert code == 0, out + err
    assert sorted(bodies) == sorted(bundled.bodies)  # the run's requests, byte for byte
    # Every rubric item scores 1: each question 1.0, but event ordering's (its tau_norm: the
    # one response line aligned to the first of three events).
    orderings = [bundled.scores[q] for q in bundled.ids["event_ordering"]]
    assert orderings == [pytest.approx(0.908248290463863)] * 2
    assert sorted(bundled.scores.values())[2:] == [1.0] * 8
    mean = (8 + sum(orderings)) / QUESTIONS
    assert f"{mean:.4f}" == "0.9816"
    assert (
        f"ok: judged again by {JUDGE}: 10 of 10 scores equal (100.0%), mean absolute difference"
        " 0.0000, mean score 0.9816 rejudged vs 0.9816 in the bundle\n"
    ) in out
    assert out.rstrip().endswith("verified") and "FAILED" not in err


def test_a_judge_scoring_some_items_otherwise_fails_naming_the_figures_and_the_questions(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    otherwise = rubric_judge(frozenset({FAST, TABLE}))
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, bundled.bundle, otherwise, bundled.checkout, bundled.chats
    )
    assert code == 1, out + err
    assert sorted(bodies) == sorted(bundled.bodies)
    # In each chat information_extraction[0]: basil 1, fast 0 -> 0.5 (was 1.0), and
    # instruction_following's one item 0 -> 0.0 (was 1.0): 3.0 less over 10 questions.
    differing = sorted(bundled.ids["information_extraction"] + bundled.ids["instruction_following"])
    assert len(differing) == 4
    (line,) = [x for x in err.splitlines() if "--rejudge" in x]
    assert line == (
        f"FAILED: --rejudge: judge {JUDGE}: equal scores below --min-agreement 95.0%: 6 of 10"
        " scores equal (60.0%), mean absolute difference 0.3000, mean score 0.6816 rejudged vs"
        f" 0.9816 in the bundle; differing: {', '.join(differing)}"
    )
    assert out.rstrip().endswith("not verified: 1 problem(s)")
    code, out, err, _ = _rejudge(
        capsys, tmp_path, bundled.bundle, otherwise, bundled.checkout, bundled.chats,
        "--min-agreement", "0.6",
    )  # fmt: skip
    assert code == 0, out + err
    assert f"ok: judged again by {JUDGE}: 6 of 10 scores equal (60.0%)" in out


def test_a_checkout_whose_prompt_file_differs_is_named_and_sent_nothing(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = tmp_path / "BEAM"
    shutil.copytree(bundled.checkout, checkout)
    prompts = checkout / PROMPTS_FILE
    recorded = _digest(prompts)
    text = prompts.read_text()
    prompts.write_text(text.replace("not this one", "not this 0ne"))  # one byte
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, bundled.bundle, rubric_judge(), checkout, bundled.chats
    )
    assert code == 1, out + err
    assert not bodies
    (line,) = [x for x in err.splitlines() if "--rejudge" in x]
    assert line == (
        f"FAILED: --rejudge: judge {JUDGE}: its prompts differ from those the bundle's judge"
        f" read (prompts: sha256 {recorded} in the bundle, {_digest(prompts)} here); set"
        " [judge] beam_repo in --config to the bundle's"
    )


def test_without_a_checkout_the_setting_is_named_and_nothing_is_sent(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, bundled.bundle, rubric_judge(), tmp_path / "nowhere", bundled.chats
    )
    assert code == 1, out + err
    assert not bodies
    (line,) = [x for x in err.splitlines() if "--rejudge" in x]
    nowhere = tmp_path / "nowhere"
    assert line.startswith(
        f"FAILED: --rejudge: judge {JUDGE}: [judge] beam_repo = '{nowhere}':"
        f" {nowhere / PROMPTS_FILE} not found (is this a BEAM checkout?); set [judge] beam_repo"
    ), line


def test_a_bundle_made_before_the_digests_were_recorded_is_not_judged_again(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def older(members: dict[str, bytes]) -> None:
        for name in ("manifest.json", "BUNDLE.json"):
            record = json_of(members, name)
            del record["prompts"]["own_judge"]
            members[name] = (json.dumps(record, indent=2) + "\n").encode()
        _relisted(members, "manifest.json")

    old = tampered(bundled.bundle, tmp_path / "old.tar.gz", older)
    code, out, err, bodies = _rejudge(
        capsys, tmp_path, old, rubric_judge(), bundled.checkout, bundled.chats
    )
    assert code == 1, out + err
    assert not bodies
    assert err.splitlines() == [
        "FAILED: --rejudge: the bundle records no digests of the prompts beam's own judge read"
        " (BUNDLE.json prompts.own_judge; a bundle made before lme-bench recorded them), so this"
        " judge cannot be shown to be the bundle's: not judged again"
    ]
    assert out.rstrip().endswith("not verified: 1 problem(s)")


def test_a_question_the_judge_fails_on_is_named_and_fails_the_bundle(
    bundled: Bundled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = rubric_judge()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if TABLE in json.dumps(body):
            return {"status": 400, "message": "refused"}
        return answer(body)

    code, out, err, _ = _rejudge(
        capsys, tmp_path, bundled.bundle, reply, bundled.checkout, bundled.chats
    )
    assert code == 1, out + err
    refused = ", ".join(bundled.ids["instruction_following"])  # one in each chat
    assert f"FAILED: --rejudge: judging failed for 2 question(s): {refused}\n" in err
    assert (
        f"FAILED: --rejudge: judge {JUDGE}: 2 question(s) scored by one side only ({refused});"
        " 8 of 8 scores equal (100.0%)"
    ) in err


BEAM_REPO = os.environ.get("BEAM_REPO")


@pytest.mark.skipif(
    not BEAM_REPO,
    reason="set BEAM_REPO to a BEAM checkout (git clone https://github.com/mohammadtavakoli78/BEAM)",
)
@pytest.mark.slow
def test_a_run_on_a_real_chat_is_judged_again_with_the_checkouts_own_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100K chat 1 of the checkout, its 20 questions, judged by the rubric judge stand-in (its
    replies fixed by each prompt) with the checkout's own prompts."""
    checkout = Path(str(BEAM_REPO))
    chat = checkout / "chats" / "100K" / "1"
    config = tmp_path / "beam.toml"
    config.write_text(f'[judge]\nbeam_repo = "{checkout}"\n')
    run = make_run(tmp_path / "results", "beam", limit=20, config=config,
                   **{"dataset.path": str(chat), "models.judge": "fake:rubric-judge"})  # fmt: skip
    bundle, record = bundle_run(run, tmp_path / "beam.tar.gz")
    assert record["prompts"]["own_judge"] == {
        "beam": {"prompts": _digest(checkout / PROMPTS_FILE),
                 "metrics": _digest(checkout / METRICS_FILE)}
    }  # fmt: skip
    capsys.readouterr()
    code = main(["verify", str(bundle), "--dataset", str(chat), "--rejudge", "--config",
                 str(config), "--min-agreement", "1"])  # fmt: skip
    said = capsys.readouterr()
    assert code == 0, said.out + said.err
    assert "ok: judged again by fake:rubric-judge: 20 of 20 scores equal (100.0%)" in said.out
