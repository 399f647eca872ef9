"""The official judge prompts read from a checkout: loaded without running the script, called
as the official script calls them, recorded by hash only; bad checkouts are one clear error."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lme_bench.config.settings import ConfigError, load_settings
from lme_bench.dataset.models import QUESTION_TYPES, Instance
from lme_bench.judge.official import OfficialPromptsError, load_official_script
from lme_bench.judge.prompts import judge_prompts, load_prompt_set
from tests.judge.standin_checkout import STANDIN_SCRIPT, expected_prompt, make_checkout


def test_the_prompt_function_loads_without_the_scripts_imports(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    script = load_official_script(checkout)
    source = (checkout / "src" / "evaluation" / "evaluate_qa.py").read_bytes()
    assert script.sha256 == hashlib.sha256(source).hexdigest()
    assert script.prompt("knowledge-update", "Q", "A", "R", abstention=False) == expected_prompt(
        "knowledge-update", "Q", "A", "R", False
    )


@pytest.mark.parametrize(
    ("question_id", "abstention"),
    [("0a1b2c3d", False), ("0a1b2c3d_abs", True), ("gpt4_x_abs_2", True)],
)
def test_prompts_are_chosen_by_type_and_abs_anywhere_in_the_id(
    tmp_path: Path, question_id: str, abstention: bool
) -> None:
    prompts = load_prompt_set(official_repo=make_checkout(tmp_path))
    assert (prompts.version, prompts.source) == ("official", "official")
    for question_type in QUESTION_TYPES:
        prompt = prompts.for_question(question_id, question_type)
        assert prompt.render("Q?", "GOLD", "RESP") == expected_prompt(
            question_type, "Q?", "GOLD", "RESP", abstention
        )
        assert prompt.name == ("abstention" if abstention else question_type)


def test_rows_carry_template_hashes_not_text(tmp_path: Path) -> None:
    prompts = load_prompt_set(official_repo=make_checkout(tmp_path))
    hashes = prompts.hashes
    assert set(hashes) == {*QUESTION_TYPES, "abstention"}
    plain = {
        hashes[t] for t in ("single-session-user", "single-session-assistant", "multi-session")
    }
    assert len(plain) == 1  # one template, one hash
    assert len(set(hashes.values())) == 5
    assert all(len(h) == 64 for h in hashes.values())
    assert prompts.script_sha256 is not None and prompts.description.startswith("the official")


def test_numeric_answers_are_shown_as_the_official_script_formats_them(tmp_path: Path) -> None:
    prompts = load_prompt_set(official_repo=make_checkout(tmp_path))
    base = {
        "question_id": "n1",
        "question_type": "temporal-reasoning",
        "question": "How many days?",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["s1"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00"],
        "haystack_sessions": [[{"role": "user", "content": "hi"}]],
        "answer_session_ids": ["s1"],
    }
    for value in (18, 3.0, 2.5):
        instance = Instance.model_validate(base | {"answer": value})
        rendered = prompts.for_question("n1", "temporal-reasoning").render(
            instance.question, instance.answer, "R"
        )
        # str.format of the JSON value, as the official script builds its prompt
        assert rendered == f"STANDIN-TEMPORAL q=How many days? a={value} r=R yes/no?"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (None, r"evaluate_qa\.py not found"),
        ("def other():\n    pass\n", "no function get_anscheck_prompt"),
        (
            "def get_anscheck_prompt(task, question, answer):\n    return ''\n",
            "does not take the parameters",
        ),
        (
            STANDIN_SCRIPT.replace("elif task == 'knowledge-update'", "elif task == 'kx'"),
            r"get_anscheck_prompt\('knowledge-update', abstention=False\) failed",
        ),
        ("def get_anscheck_prompt(:\n", "not valid Python"),
    ],
)
def test_a_bad_checkout_is_one_clear_error(
    tmp_path: Path, script: str | None, message: str
) -> None:
    checkout = tmp_path if script is None else make_checkout(tmp_path, script)
    with pytest.raises(OfficialPromptsError, match=message):
        load_official_script(checkout)


def test_official_repo_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LME_JUDGE__OFFICIAL_REPO", str(make_checkout(tmp_path / "lme")))
    settings = load_settings(None)
    assert settings.judge.official_repo == tmp_path / "lme"
    assert judge_prompts(settings.judge).source == "official"
    with pytest.raises(ConfigError, match="prompts_dir or official_repo, not both"):
        load_settings(None, **{"judge.prompts_dir": str(tmp_path)})
