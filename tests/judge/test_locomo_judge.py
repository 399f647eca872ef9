"""LoCoMo questions judged by an LLM, beside the official F1: categories 1-4 take the prompt
set's generic criterion with the gold answer, category 5 (adversarial) the abstention prompt
with a neutral explanation and never the adversarial answer; checked on the request bodies that
reach a loopback OpenAI-compatible server, with lme-bench's prompts, a stand-in official
checkout and a custom folder, call by call and through a batch job."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.locomo.judge_stage import NO_ANSWER_EXPLANATION, locomo_input
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.shards import QuestionRef, prepare_dataset
from lme_bench.judge.batch_job_stage import JudgeItem, judge_in_batch_jobs
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.prompts import bundled_prompts_dir, load_prompt_set
from lme_bench.judge.stage import judge_question
from lme_bench.qa.stage import unanswered_row
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from tests.benchmarks.locomo.samples import listed_sample, write_json
from tests.judge.standin_checkout import expected_prompt, make_checkout
from tests.providers.fake_batch_server import serve_batches
from tests.providers.fake_openai_server import serve

# The written sample's questions (tests/benchmarks/locomo/samples.py): category, question, gold
# as the judge must be given it (the open-domain answer up to its first ';').
ASKED = [
    ("multi-hop", "What instruments does Ben play?", "violin, clarinet"),
    ("temporal", "When did Ada run a 5k?", "2023"),
    ("open-domain", "Would Ada like a cat?", "Likely no"),
    ("single-hop", "What is Ada's dog called?", "Pip"),
    ("adversarial", "What is Ben's dog called?", NO_ANSWER_EXPLANATION),
]
RESPONSE = "Ben never said."  # names no dog: the adversarial answer (Pip) cannot come from it


def _refs(tmp_path: Path) -> list[QuestionRef]:
    path = write_json(tmp_path / "locomo.json", [listed_sample("conv-7")])
    return prepare_dataset(path, tmp_path / "split", *splitter_for(None, path)).questions


def _settings(tmp_path: Path, url: str, **extra: Any) -> Settings:
    overrides = {
        "run.results_dir": str(tmp_path / "results"),
        "models.judge": "local:judge",
        "models.retry_attempts": 1,
        "providers.local": {"base_url": url},
    }
    return load_settings(None, **(overrides | extra))


def _answered(ref: QuestionRef, settings: Settings, text: str = RESPONSE) -> HypothesisRow:
    return replace(unanswered_row(ref, settings), hypothesis=text)


def _judge_all(refs: list[QuestionRef], settings: Settings) -> list[list[ScoreRow]]:
    return [
        asyncio.run(judge_question(r, _answered(r, settings), judge_panel(settings))) for r in refs
    ]


def _filled(template: str, question: str, answer: str) -> str:
    return (
        template.replace("{question}", question)
        .replace("{answer}", answer)
        .replace("{response}", RESPONSE)
    )


def test_each_category_reaches_the_judge_with_its_prompt_and_answer(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    with serve([{"content": "yes"}]) as (url, fake):
        rows = _judge_all(refs, _settings(tmp_path, url))
        bodies = list(fake.requests)
    folder = bundled_prompts_dir()
    generic = (folder / "default.txt").read_text()
    abstention = (folder / "abstention.txt").read_text()
    assert [(r.question_type, r.question_id) for r in refs] == [
        (category, f"conv-7-q{i}") for i, (category, _, _) in enumerate(ASKED)
    ]
    sent = [body["messages"][0]["content"] for body in bodies]
    assert sent == [
        _filled(abstention if category == "adversarial" else generic, question, answer)
        for category, question, answer in ASKED
    ]
    adversarial = json.dumps(bodies[-1])
    assert "Pip" not in adversarial and NO_ANSWER_EXPLANATION in adversarial
    llm = [row for found in rows for row in found if row.judge_kind == "llm"]
    assert [(r.question_type, r.prompt_name, r.label) for r in llm] == [
        (category, "abstention" if category == "adversarial" else "default", True)
        for category, _, _ in ASKED
    ]
    assert llm[-1].is_abstention and not any(r.is_abstention for r in llm[:-1])


def test_official_prompts_give_their_generic_criterion_and_abstention_prompt(
    tmp_path: Path,
) -> None:
    """The official script has no prompt for LoCoMo's categories (it raises for a type it does
    not know): 1-4 take the criterion its single-session and multi-session types share."""
    checkout = make_checkout(tmp_path / "LongMemEval")
    refs = _refs(tmp_path)
    with serve([{"content": "no"}]) as (url, fake):
        settings = _settings(tmp_path, url, **{"judge.official_repo": str(checkout)})
        rows = _judge_all(refs, settings)
        sent = [body["messages"][0]["content"] for body in fake.requests]
    assert sent == [
        expected_prompt("multi-session", q, a, RESPONSE, category == "adversarial")
        for category, q, a in ASKED
    ]
    names = [r.prompt_name for found in rows for r in found if r.judge_kind == "llm"]
    assert names == ["default"] * 4 + ["abstention"]


def test_a_custom_folder_gives_its_default_prompt_even_beside_per_type_ones(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    for name in ("default", "abstention", "single-session-user", "temporal-reasoning"):
        (folder / f"{name}.txt").write_text(f"{name} {{question}} {{answer}} {{response}}")
    prompts = load_prompt_set(folder)
    for category, question, answer in ASKED:
        given = locomo_input(prompts, category, answer)
        expected = "abstention" if category == "adversarial" else "default"
        assert given.prompt.render(question, given.answer, "r") == (
            f"{expected} {question} {given.answer} r"
        )
    with pytest.raises(ValueError, match="unknown category 'temporal-reasoning'"):
        locomo_input(prompts, "temporal-reasoning", "x")


def test_the_fallback_grades_an_adversarial_answer_by_its_abstention(tmp_path: Path) -> None:
    ref = _refs(tmp_path)[-1]
    no_llm = {"run.results_dir": str(tmp_path), "models.judge": "", "judge.fallback": True}
    settings = load_settings(None, **no_llm)
    said = {
        text: asyncio.run(
            judge_question(ref, _answered(ref, settings, text), judge_panel(settings))
        )
        for text in ("That is not mentioned anywhere.", "His dog is called Pip.")
    }
    labels = {text: [(r.judge_kind, r.label) for r in rows] for text, rows in said.items()}
    assert labels == {
        "That is not mentioned anywhere.": [("fallback", True)],
        "His dog is called Pip.": [("fallback", False)],
    }


def test_batch_judging_gives_the_call_by_call_rows(tmp_path: Path) -> None:
    refs = _refs(tmp_path)
    with serve_batches() as (base_url, fake):
        config = tmp_path / "batch.toml"
        config.write_text(
            '[models]\njudge = "lab:gpt-4o-2024-08-06"\n'
            f'[providers.lab]\nkind = "openai-compatible"\nbase_url = "{base_url}"\n'
            "[judge]\nbatch = true\nbatch_poll_s = 0.01\n"
        )
        settings = load_settings(config, **{"run.results_dir": str(tmp_path / "results")})
        items = [JudgeItem(r, _answered(r, settings)) for r in refs]
        batched = judge_in_batch_jobs(
            items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        assert not fake.chat_requests  # every verdict came from the job
        live = {
            r.question_id: asyncio.run(judge_question(r, i.hypothesis, judge_panel(settings)))
            for r, i in zip(refs, items, strict=True)
        }
        sent = [json.loads(line)["body"] for line in fake.files["file-1"][2].splitlines()]

    def comparable(rows: dict[str, list[ScoreRow]]) -> dict[str, list[dict[str, Any]]]:
        return {
            q: [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in found]
            for q, found in rows.items()
        }

    assert comparable(batched) == comparable(live)
    assert sent == fake.chat_requests  # the same bodies, in the same order
    assert len(sent) == 5 and NO_ANSWER_EXPLANATION in sent[-1]["messages"][0]["content"]
