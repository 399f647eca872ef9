"""`lme-bench score` on one BEAM chat's answers in the official evaluator's shape: rubric-scored
by the run's BEAM judge (prompts from a stand-in [judge] beam_repo), written back in the
official format; a question the chat does not hold is one error naming the ability, the place
and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from lme_bench.cli import main
from tests.benchmarks.beam.samples import QUESTIONS, write_chat, write_checkout, write_questions


def _setup(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    write_chat(tmp_path)
    write_questions(tmp_path)
    config = tmp_path / "beam.toml"
    config.write_text(f'[judge]\nbeam_repo = "{write_checkout(tmp_path)}"\n')
    answers = {
        ability: [
            {"question": q["question"], "llm_response": f"{ability} {n}"}
            for n, q in enumerate(items)
        ]
        for ability, items in QUESTIONS.items()
    }
    return tmp_path / "chats", config, answers


def _score(
    capsys: pytest.CaptureFixture[str], file: Path, chats: Path, config: Path, out: Path
) -> tuple[int, str]:
    capsys.readouterr()
    code = main(
        [
            "score",
            str(file),
            "--dataset",
            str(chats),
            "--judge",
            "fake:rubric-judge",
            "--config",
            str(config),
            "--out",
            str(out),
        ]
    )
    return code, capsys.readouterr().err


def test_answers_get_rubric_scores_and_are_written_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chats, config, answers = _setup(tmp_path)
    file = tmp_path / "answers.json"
    file.write_text(json.dumps(answers))
    out = tmp_path / "scored"
    code, err = _score(capsys, file, chats, config, out)
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["answers_file"]["format"] == "beam-answers"
    assert summary["answers_file"]["missing"] == 0
    questions = sum(len(v) for v in QUESTIONS.values())
    assert summary["beam"]["judges"]["fake:rubric-judge"]["judged"] == questions
    (written,) = (out / "beam").rglob("results-lme-bench.json")
    back = json.loads(written.read_text())
    assert {a: [i["llm_response"] for i in v] for a, v in back.items()} == {
        a: [i["llm_response"] for i in v] for a, v in answers.items()
    }


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            "question",
            "information_extraction[1]: field question: 'Something else?' is not the"
            " question of chat",
        ),
        ("extra", "information_extraction[2]: no such probing question in chat"),
    ],
)
def test_a_question_the_chat_does_not_hold_is_named(
    change: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chats, config, answers = _setup(tmp_path)
    edited = copy.deepcopy(answers)
    if change == "question":
        edited["information_extraction"][1]["question"] = "Something else?"
    else:
        edited["information_extraction"].append({"question": "Q?", "llm_response": "A"})
    file = tmp_path / "answers.json"
    file.write_text(json.dumps(edited))
    code, err = _score(capsys, file, chats, config, tmp_path / "scored")
    assert code == 2
    assert err.startswith(f"lme-bench: error: {file}: {said}"), err
    assert not (tmp_path / "scored").exists()
