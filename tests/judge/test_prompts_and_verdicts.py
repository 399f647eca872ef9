from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.judge.prompts import PromptSetError, load_prompt_set
from lme_bench.judge.verdict import read_verdict


@pytest.mark.parametrize(
    ("question_id", "question_type", "expected"),
    [
        ("a1", "single-session-user", "default"),
        ("a1", "single-session-assistant", "default"),
        ("a1", "multi-session", "default"),
        ("a1", "temporal-reasoning", "temporal-reasoning"),
        ("a1", "knowledge-update", "knowledge-update"),
        ("a1", "single-session-preference", "single-session-preference"),
        ("a1_abs", "temporal-reasoning", "abstention"),
        ("gpt4_9f_abs", "multi-session", "abstention"),
    ],
)
def test_prompt_selection_by_type_and_abstention(
    question_id: str, question_type: str, expected: str
) -> None:
    assert load_prompt_set().for_question(question_id, question_type).name == expected


def test_prompts_carry_the_criteria_and_render_all_fields() -> None:
    prompts = load_prompt_set()
    assert prompts.version == "lme-bench-judge-v1"
    for question_type in QUESTION_TYPES:
        text = prompts.for_question("x", question_type).render("Q?", "GOLD", "RESP")
        assert "Q?" in text and "GOLD" in text and "RESP" in text and "{" not in text
        assert text.rstrip().endswith("yes or no.")
    flat = {name: " ".join(p.template.split()) for name, p in prompts.prompts.items()}
    assert "off-by-one" in flat["temporal-reasoning"]
    assert "older values alongside it" in flat["knowledge-update"]
    assert "every point of the rubric" in flat["single-session-preference"]
    assert "cannot be answered" in flat["abstention"]
    assert "only part of the correct answer is not correct" in flat["default"]
    assert len(set(prompts.hashes.values())) == len(prompts.prompts) == 5


def test_a_users_own_prompt_folder_replaces_ours(tmp_path: Path) -> None:
    (tmp_path / "default.txt").write_text("Q {question} A {answer} R {response} yes/no")
    (tmp_path / "abstention.txt").write_text("ABS {question} {answer} {response}")
    (tmp_path / "VERSION").write_text("official-2024\n")
    prompts = load_prompt_set(tmp_path)
    assert prompts.version == "official-2024"
    assert prompts.for_question("q", "temporal-reasoning").name == "default"
    (tmp_path / "abstention.txt").write_text("no fields here")
    with pytest.raises(PromptSetError, match=r"abstention\.txt: the prompt lacks"):
        load_prompt_set(tmp_path)


@pytest.mark.parametrize(
    ("reply", "status", "label"),
    [
        ("yes", "ok", True),
        ("Yes.", "ok", True),
        ("YES, it is correct", "ok", True),
        ("no", "ok", False),
        ("No, the response misses the date.", "ok", False),
        ("", "judge-error", None),
        (None, "judge-error", None),
        ("I cannot help with that.", "judge-error", None),
        ("asdf qwerty", "judge-error", None),
    ],
)
def test_verdicts(reply: str | None, status: str, label: bool | None) -> None:
    verdict = read_verdict(reply)
    assert (verdict.status, verdict.label) == (status, label)
    assert verdict.raw == (reply or "")
