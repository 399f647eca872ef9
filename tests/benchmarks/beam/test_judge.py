"""The LLM-judged BEAM scorer with the scripted fake model and a stand-in checkout of our own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from lme_bench.builtin_benchmarks.beam.judge import BeamJudge
from lme_bench.builtin_benchmarks.beam.models import BeamGold
from lme_bench.builtin_benchmarks.beam.prompts import BeamPromptsError, load_beam_prompts
from lme_bench.builtin_benchmarks.beam.scoring import QuestionScore
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.retry import RetryPolicy
from tests.benchmarks.beam.samples import STANDIN_METRICS, write_checkout

NO_WAIT = RetryPolicy(attempts=3, base_s=0, throttle_base_s=0, jitter=0)


def gold(ability: str, rubric: tuple[str, ...]) -> BeamGold:
    return BeamGold("100K-1:q1", "100K-1", ability, 0, rubric, None)  # type: ignore[arg-type]


def judge_by_item(scores: dict[str, object]) -> ScriptedChatModel:
    """Replies with the score set for the rubric item named in the prompt; answers the
    equivalence question 'yes' when the item's words are in the line."""

    def reply(messages: list[BaseMessage]) -> str:
        text = str(messages[-1].content)
        if isinstance(messages[0], SystemMessage):
            item, line = text.removeprefix("A: ").split(" | B: ")
            return "YES" if item.lower() in line.lower() else "no"
        item = text.split("item: ")[1].split("\n")[0]
        return json.dumps({"score": scores[item], "reason": "scripted"})

    return ScriptedChatModel(script=[reply])


def test_prompts_come_from_the_checkout(tmp_path: Path) -> None:
    prompts = load_beam_prompts(write_checkout(tmp_path))
    rendered = prompts.rubric_prompt("must say basil", "Basil, of course")
    assert (
        rendered == "STANDIN JUDGE\nquestion: <question>\nitem: must say basil\n"
        "response: Basil, of course\nreply with JSON"
    )
    assert prompts.equivalence("x", "y") == [
        ("system", "STANDIN same event? YES or NO"),
        ("user", "A: x | B: y"),
    ]
    assert len(prompts.prompts_sha256) == len(prompts.rubric_sha256) == 64


def test_rubric_items_are_judged_one_call_each(tmp_path: Path) -> None:
    prompts = load_beam_prompts(write_checkout(tmp_path))
    model = judge_by_item({"states basil": 1.0, "states fast": 0.5, "states balcony": 0.0})
    judge = BeamJudge(model, prompts, NO_WAIT)
    rubric = ("states basil", "states fast", "states balcony")
    result = asyncio.run(judge.score(gold("information_extraction", rubric), "Basil grows fast"))
    assert result.status == "ok"
    assert [v.score for v in result.items] == [1.0, 0.0, 0.0]  # a 0.5 counts 0, as officially
    assert result.llm_judge_score == result.reported == pytest.approx(1 / 3)
    assert result.question_score() == QuestionScore("100K-1", "information_extraction", 1 / 3)
    sent = [call.messages for call in model.calls]
    assert sent == [
        [HumanMessage(prompts.rubric_prompt(item, "Basil grows fast"))] for item in rubric
    ]
    assert result.account.calls == 3


def test_event_ordering_aligns_then_judges_and_reports_tau(tmp_path: Path) -> None:
    prompts = load_beam_prompts(write_checkout(tmp_path))
    model = judge_by_item({"Planning": 1.0, "Basil": 0.5, "Sprouting": 0.0})
    judge = BeamJudge(model, prompts, NO_WAIT)
    response = "1. Basil chosen\n2. Planning done\n3. Something else"
    result = asyncio.run(
        judge.score(gold("event_ordering", ("Planning", "Basil", "Sprouting")), response)
    )
    assert result.ordering is not None
    # aligned lines: Basil, Planning, "3. Something else" -> the hand-worked case of test_scoring
    assert result.ordering.f1 == pytest.approx(2 / 3)
    assert result.ordering.tau_norm == pytest.approx(2 / 3)
    assert result.reported == result.ordering.tau_norm
    assert result.llm_judge_score == pytest.approx(0.5)  # float scores here: (1 + 0.5 + 0) / 3
    pairs = [call.messages[-1].content for call in model.calls if len(call.messages) == 2]
    assert pairs == [
        "A: Planning | B: 1. Basil chosen",
        "A: Basil | B: 1. Basil chosen",
        "A: Planning | B: 2. Planning done",
        "A: Sprouting | B: 3. Something else",
    ]


def test_an_unreadable_reply_scores_zero_and_is_counted(tmp_path: Path) -> None:
    prompts = load_beam_prompts(write_checkout(tmp_path))
    model = ScriptedChatModel(script=["I refuse", '{"score": 1.0}'])
    result = asyncio.run(
        BeamJudge(model, prompts, NO_WAIT).score(gold("summarization", ("a", "b")), "x")
    )
    assert (result.llm_judge_score, result.unreadable_items) == (0.5, 1)


def test_throttled_calls_are_retried_and_counted(tmp_path: Path) -> None:
    prompts = load_beam_prompts(write_checkout(tmp_path))
    model = ScriptedChatModel(script=['{"score": 1.0}'], throttle_every=2)
    result = asyncio.run(
        BeamJudge(model, prompts, NO_WAIT).score(gold("abstention", ("a", "b")), "x")
    )
    assert result.status == "ok" and result.llm_judge_score == 1.0
    assert result.account.retries.throttled == 1 and result.account.calls == 2


def test_a_call_failing_after_its_retries_leaves_no_score(tmp_path: Path) -> None:
    prompts = load_beam_prompts(write_checkout(tmp_path))
    model = ScriptedChatModel(script=["{}"], fault_every=1)
    result = asyncio.run(BeamJudge(model, prompts, NO_WAIT).score(gold("abstention", ("a",)), "x"))
    assert result.status == "error" and result.reported is None
    assert result.question_score() is None
    assert result.error is not None and "ProviderUnavailable" in result.error


@pytest.mark.parametrize(
    ("prompts", "metrics", "problem"),
    [
        (None, STANDIN_METRICS, "src/prompts.py not found"),
        ("other = 'x'\n", STANDIN_METRICS, "no unified_llm_judge_base_prompt"),
        ("unified_llm_judge_base_prompt = 'no fields'\n", STANDIN_METRICS, "lacks <rubric_item>"),
        ("unified_llm_judge_base_prompt = 'a' + 'b'\n", STANDIN_METRICS, "not a plain string"),
        ("unified_llm_judge_base_prompt = '''\n", STANDIN_METRICS, "not valid Python"),
        (
            "unified_llm_judge_base_prompt = '<rubric_item><llm_response>'\n",
            None,
            "compute_metrics.py not found",
        ),
        (
            "unified_llm_judge_base_prompt = '<rubric_item><llm_response>'\n",
            "x = 1\n",
            "no function llm_equivalence",
        ),
        (
            "unified_llm_judge_base_prompt = '<rubric_item><llm_response>'\n",
            "def llm_equivalence(first_paragraph, second_paragraph, llm):\n"
            "    return llm.invoke('text').content\n",
            "sent no list of messages",
        ),
    ],
)
def test_a_checkout_without_usable_prompts_is_named(
    tmp_path: Path, prompts: str | None, metrics: str | None, problem: str
) -> None:
    checkout = write_checkout(tmp_path, prompts, metrics)
    with pytest.raises(BeamPromptsError, match=problem) as caught:
        load_beam_prompts(checkout)
    assert str(checkout) in str(caught.value)
