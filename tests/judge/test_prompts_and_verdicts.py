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


def test_our_prompts_keep_the_official_criteria_and_render_all_fields() -> None:
    prompts = load_prompt_set()
    assert (prompts.version, prompts.source) == ("lme-bench-judge-v2", "lme-bench")
    assert "not the official text" in prompts.description
    for question_type in QUESTION_TYPES:
        for question_id in ("x", "x_abs"):
            prompt = prompts.for_question(question_id, question_type)
            text = prompt.render("Q?", "GOLD", "RESP")
            assert "Q?" in text and "GOLD" in text and "RESP" in text and "{" not in text
            assert text.rstrip().endswith("Reply with yes or no only.")
    flat = {p.name: " ".join(p.render("", "", "").split()) for p in prompts.choices.values()}
    assert "off-by-one" in flat["temporal-reasoning"]
    assert "earlier information together with an updated answer" in flat["knowledge-update"]
    assert "need not reflect every point of the rubric" in flat["single-session-preference"]
    assert "recognises that the question cannot be answered" in flat["abstention"]
    assert "only part of the information" in flat["default"]
    # Nothing beyond the official criteria: the abstention prompt does not judge answers given.
    assert "as fact" not in flat["abstention"]
    assert len(set(prompts.hashes.values())) == len(prompts.hashes) == 5


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
    ("reply", "label", "readable"),
    [
        ("yes", True, True),
        ("Yes.", True, True),
        ("YES, it is correct", True, True),
        ("no", False, True),
        ("No, the response misses the date.", False, True),
        ("", False, False),  # the official rule: no "yes" is a wrong answer
        (None, False, False),
        ("I cannot help with that.", False, False),
        ("asdf qwerty", False, False),
        (
            "Yesterday",
            True,
            False,
        ),  # 'yes' in the lowercased reply, as the official script reads it
    ],
)
def test_verdicts_follow_the_official_rule(reply: str | None, label: bool, readable: bool) -> None:
    verdict = read_verdict(reply)
    assert (verdict.label, verdict.readable) == (label, readable)
    assert verdict.raw == (reply or "")
