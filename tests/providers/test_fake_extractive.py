"""The key-free reader and judge stand-ins on the prompts the run sends them: the reader answers
from what memory search returned as an extractive QA baseline would, the judge matches the gold
answer lexically as a fair judge would."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from lme_bench.backends.protocol import Hit
from lme_bench.config.settings import JudgeSettings, Settings
from lme_bench.judge.prompts import judge_prompts
from lme_bench.providers.factory import model_for
from lme_bench.providers.fake_extractive import DONT_KNOW
from lme_bench.providers.fake_policies import fake_policy
from lme_bench.qa.reader import Gathered, load_qa_prompts, reader_prompt

QUESTION_DATE = "2023/05/30 (Tue) 23:40"


def _hit(text: str, date: str, score: float = 1.0) -> Hit:
    return Hit(text, score, date, role="user")


def _read(question: str, hits: list[Hit], latest_context: str | None = None) -> str:
    memory = Gathered(entries=hits, latest_context=latest_context)
    prompt, _ = reader_prompt(load_qa_prompts(), question, QUESTION_DATE, memory, 40_000)
    model, _, _ = model_for("qa", Settings(models={"qa": "fake:extractive-reader"}))
    return str(model.invoke([HumanMessage(prompt)]).content)


def test_the_reader_answers_with_the_statement_that_matches_not_a_question_asked() -> None:
    hits = [
        _hit("Which dog breed suits a small flat? Is a pug fine?", "2023/03/01 (Wed) 10:00"),
        _hit("How long should sourdough proof in the fridge?", "2023/03/02 (Thu) 10:00"),
        _hit("Our dog Max is a golden retriever, 14 weeks old.", "2023/04/11 (Tue) 19:02"),
        _hit("Crate training helps a lot, says my sister.", "2023/04/12 (Wed) 08:00"),
    ]
    assert (
        _read("What breed is my dog?", hits) == "Our dog Max is a golden retriever, 14 weeks old."
    )


def test_the_reader_prefers_the_more_recent_of_equal_matches() -> None:
    hits = [  # best first as search returns them; the prompt shows them oldest first
        _hit("I live in Austin now, for my partner's job.", "2023/04/02 (Sun) 09:00"),
        _hit("I live in Denver, it is dry at altitude.", "2023/01/05 (Thu) 09:00"),
    ]
    assert _read("Which city do I live in now?", hits).startswith("I live in Austin now")


def test_the_reader_answers_from_the_context_document_too() -> None:
    context = "- The user's train ride into the office is about 45 minutes each way."
    answer = _read("How long is my train commute to the office?", [], latest_context=context)
    assert answer == "The user's train ride into the office is about 45 minutes each way."


def test_the_reader_says_it_does_not_know_when_the_memory_barely_touches_the_question() -> None:
    hits = [
        _hit("My son's guitar teacher, Mr. Okafor, is very strict.", "2023/04/03 (Mon) 18:48"),
        _hit("Any tips for a first week with a puppy?", "2023/04/04 (Tue) 10:00"),
    ]
    assert _read("What is the name of my daughter's piano teacher?", hits) == DONT_KNOW
    assert _read("What breed is my dog?", []) == DONT_KNOW


def _judge(messages: list[BaseMessage]) -> AIMessage:
    policy = fake_policy("lexical-judge")
    assert policy is not None
    return policy(messages)


def _verdict(question_id: str, question_type: str, gold: str, response: str) -> str:
    prompt = judge_prompts(JudgeSettings()).for_question(question_id, question_type)
    text = prompt.render("The question?", gold, response)
    return str(_judge([HumanMessage(text)]).content)


@pytest.mark.parametrize(
    ("question_type", "gold", "response", "verdict"),
    [
        ("temporal-reasoning", "6 months ago (your first day was March 6, 2023).",
         "You started six months ago.", "yes"),
        ("temporal-reasoning", "6 months ago (your first day was March 6, 2023).",
         "You started 5 months ago, on March 6, 2023.", "no"),
        ("single-session-user", "Sage green", "We painted the walls a soft Sage-green.", "yes"),
        ("single-session-user", "From Crumb & Kettle, the bakery on Elm Street",
         "I ordered it from Crumb and Kettle.", "no"),
        ("single-session-user", "From Crumb & Kettle, the bakery on Elm Street",
         "I ordered the cake from Crumb & Kettle.", "yes"),
        ("knowledge-update", "5:45 AM", "These days I get up at 5:45 am.", "yes"),
        ("temporal-reasoning", "18 days. 19 days (including the last day) is also acceptable.",
         "It was 18 days.", "yes"),
        ("multi-session", "3 (ukulele, piano, and harmonica)", "Three instruments.", "yes"),
        ("multi-session", "3 (ukulele, piano, and harmonica)",
         "I stayed three nights for $412.", "no"),
        ("single-session-preference", "The user would prefer quick vegetarian recipes",
         "Quick vegetarian recipes, as you would prefer.", "no"),
    ],
)  # fmt: skip
def test_the_judge_finds_the_gold_answer_in_the_response(
    question_type: str, gold: str, response: str, verdict: str
) -> None:
    assert _verdict("q1", question_type, gold, response) == verdict


def test_the_judge_accepts_only_a_refusal_to_an_unanswerable_question() -> None:
    why = "The information provided is not enough. You mentioned your son's guitar teacher."
    assert _verdict("q1_abs", "single-session-user", why, DONT_KNOW) == "yes"
    assert _verdict("q1_abs", "single-session-user", why, "Mr. Okafor") == "no"


def test_the_judge_says_unreadable_to_a_prompt_without_an_answer_or_response() -> None:
    assert _judge([HumanMessage("Is this right?")]).content == "unreadable"
