"""`lme-bench judge calibrate` end to end: a candidate judge on a loopback OpenAI-compatible
server re-judges an eval-results file's answers with the (stand-in) official prompts, and the
profile holds the figures of its scripted labels against the reference's; bad input is one
clear error naming the file, the line and the field."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from lme_bench.cli import main
from lme_bench.dataset.loader import iter_questions
from lme_bench.run.steps import bundled_sample
from tests.judge.standin_checkout import expected_prompt, make_checkout
from tests.providers.fake_openai_server import serve

# question index in the sample -> (hypothesis, the reference's label)
SCRIPT = [
    ("GOOD a", True),
    ("GOOD b", True),
    ("GOOD c", False),  # the candidate says yes where the reference said no
    ("BAD d", False),
    ("BAD e", True),  # the candidate says no where the reference said yes
    ("BAD f", False),
    ("GOOD g", True),
    ("FAIL h", True),  # the candidate's call fails: left out
    ("BAD i", False),
    ("GOOD j", True),
]


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = body["messages"][0]["content"]
    if " r=FAIL" in prompt:
        return {"status": 400, "message": "this request is refused"}
    return {"content": "Yes." if " r=GOOD" in prompt else "No."}


def _sample() -> list[Any]:
    return [q.instance for q in iter_questions(bundled_sample())]


def _write_reference(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _config(tmp_path: Path, url: str) -> Path:
    checkout = make_checkout(tmp_path / "LongMemEval")
    config = tmp_path / "calibrate.toml"
    config.write_text(
        f'[providers.local]\nkind = "openai-compatible"\nbase_url = "{url}"\n\n'
        f'[judge]\nofficial_repo = "{checkout}"\n\n[models]\nretry_attempts = 2\n'
    )
    return config


def test_calibrate_over_http_writes_a_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = _sample()
    lines = [
        {
            "question_id": q.question_id,
            "hypothesis": hypothesis,
            "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": label},
        }
        for q, (hypothesis, label) in zip(sample, SCRIPT, strict=False)
    ]
    lines[3]["autoeval_label"] = False  # a plain bool label is accepted too
    reference = _write_reference(tmp_path / "hyp.jsonl.eval-results-gpt-4o", lines)
    with serve([_reply]) as (url, fake):
        code = main(
            [
                "judge",
                "calibrate",
                str(reference),
                "--dataset",
                str(bundled_sample()),
                "--judge",
                "local:successor-1",
                "--config",
                str(_config(tmp_path, url)),
                "--results-dir",
                str(tmp_path / "out"),
                "--resamples",
                "300",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0
    profile_path = tmp_path / "out" / "judge-profile-local_successor-1.json"
    profile = json.loads(profile_path.read_text())
    assert str(profile_path) in out and "local:successor-1" in out

    # the requests: the stand-in official prompt of each question, in the official body
    by_id = {q.question_id: q for q in sample}
    sent = {b["messages"][0]["content"] for b in fake.requests}
    for line in lines:
        q = by_id[line["question_id"]]
        assert (
            expected_prompt(
                q.question_type, q.question, q.answer, line["hypothesis"], "_abs" in q.question_id
            )
            in sent
        )
    recorded = profile["candidate"]["request"]
    body_fields = recorded.get("body", recorded)  # a recorded body, or the fields as sent
    for field in ("model", "n", "temperature", "max_tokens"):
        assert body_fields[field] == fake.requests[0][field]

    # the figures, from the scripted labels: FAIL left out, 9 pairs
    pairs = [(label, h.startswith("GOOD")) for h, label in SCRIPT if not h.startswith("FAIL")]
    n = len(pairs)
    agree = sum(r == c for r, c in pairs) / n
    ref_yes = sum(r for r, _ in pairs) / n
    cand_yes = sum(c for _, c in pairs) / n
    chance = ref_yes * cand_yes + (1 - ref_yes) * (1 - cand_yes)
    overall = profile["figures"]["overall"]
    assert profile["n"] == n == 9
    assert profile["failed"]["n"] == 1 and profile["failed"]["question_ids"] == [
        lines[7]["question_id"]
    ]
    assert overall["agreement"] == pytest.approx(agree)
    assert overall["kappa"] == pytest.approx((agree - chance) / (1 - chance))
    assert overall["reference_yes_candidate_no"]["count"] == 1
    assert overall["reference_no_candidate_yes"]["count"] == 1
    assert overall["accuracy_difference"] == pytest.approx(cand_yes - ref_yes)
    assert "1 question(s) left out" in out

    # what it rests on
    assert profile["reference"]["sha256"] == hashlib.sha256(reference.read_bytes()).hexdigest()
    assert "gpt-4o-2024-08-06" in profile["reference"]["judge_model"]
    dataset_digest = hashlib.sha256(bundled_sample().read_bytes()).hexdigest()
    assert profile["dataset"]["sha256"] == dataset_digest
    assert profile["prompts"]["source"] == "official" and profile["prompts"]["official"]
    assert len(profile["prompts"]["sha256"]) > 1 and profile["prompts"]["script_sha256"]
    assert profile["code"]["git"]["sha"] is None or len(profile["code"]["git"]["sha"]) == 40
    assert sum(sum(t.values()) for t in profile["tables"].values()) == n
    assert not list((tmp_path / "out").glob(".*.tmp"))  # written atomically


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda lines: lines[1].pop("question_id"), "line 2: field question_id is missing"),
        (lambda lines: lines[2].pop("autoeval_label"), "line 3: field autoeval_label is missing"),
        (
            lambda lines: lines[0].update(autoeval_label={"model": "m", "label": "yes"}),
            "line 1: field autoeval_label.label: expected true or false",
        ),
        (lambda lines: lines[1].pop("hypothesis"), "line 2: field hypothesis is missing"),
        (
            lambda lines: lines[2].update(question_id="not-in-the-dataset"),
            "line 3: field question_id: 'not-in-the-dataset' is not in the dataset",
        ),
        (
            lambda lines: lines[2].update(question_id=lines[0]["question_id"]),
            "line 3: field question_id:",
        ),
    ],
)
def test_bad_reference_lines_are_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, expected: str
) -> None:
    lines: list[dict[str, Any]] = [
        {"question_id": q.question_id, "hypothesis": "x", "autoeval_label": {"label": True}}
        for q in _sample()[:3]
    ]
    change(lines)
    reference = _write_reference(tmp_path / "ref.jsonl", lines)
    code = main(
        [
            "judge",
            "calibrate",
            str(reference),
            "--dataset",
            str(bundled_sample()),
            "--judge",
            "fake:match-judge",
            "--results-dir",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"lme-bench: error: {reference}: {expected}" in err
    assert not (tmp_path / "out").exists()


def test_a_missing_reference_or_a_bad_judge_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--dataset", str(bundled_sample()), "--results-dir", str(tmp_path)]
    assert (
        main(["judge", "calibrate", str(tmp_path / "nope.jsonl"), *args, "--judge", "fake:x"]) == 2
    )
    assert "nope.jsonl: no such reference file or run folder" in capsys.readouterr().err
    q = _sample()[0]
    line = {"question_id": q.question_id, "hypothesis": "x", "autoeval_label": True}
    reference = _write_reference(tmp_path / "ref.jsonl", [line])
    assert main(["judge", "calibrate", str(reference), *args, "--judge", "nowhere:model"]) == 2
    assert "nowhere:model" in capsys.readouterr().err
