"""The judge's request per model family, over real HTTP against loopback servers that refuse
what the real APIs refuse: the official body to OpenAI chat models and OpenAI-compatible
servers, the nearest accepted body to OpenAI reasoning models, Anthropic's Messages API and
Bedrock's Converse API; each reply read as a verdict, and the shape sent kept in the manifest."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_core.messages import HumanMessage

from lme_bench.config.settings import ProviderSettings, Settings, load_settings
from lme_bench.judge.family_requests import JudgeRequest, judge_request, judge_request_shapes
from lme_bench.judge.official_request import OfficialJudgeRequest, official_body
from lme_bench.judge.prompts import load_prompt_set
from lme_bench.judge.request_shapes import (
    OFFICIAL,
    PROMPT,
    REASONING_CAP,
    RequestShape,
    request_shape,
)
from lme_bench.judge.runner import LlmJudge
from lme_bench.providers.anthropic_messages import AnthropicMessages, AnthropicRequestError
from lme_bench.providers.calls import CountedModel, was_capped
from lme_bench.providers.factory import ModelSpec, parse_model, problems, retry_policy
from lme_bench.results.qa_tables import ScoreRow
from tests.providers.aws_env import use_fake_aws
from tests.providers.fake_anthropic_server import API_KEY, serve_anthropic
from tests.providers.fake_bedrock_server import serve_bedrock
from tests.providers.fake_openai_server import serve
from tests.providers.openai_reasoning_rules import REASONING_TOKENS
from tests.run.test_answer_judge import _run as run_answer_and_judge

REASONING_MODELS = [
    "o1",
    "o1-mini",
    "o3",
    "o3-mini",
    "o4-mini",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5.1",
    "gpt-5-chat-latest",
]
CLAUDE = "claude-haiku-4-5"
BEDROCK_CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0"


def _settings(tmp_path: Path, **providers: ProviderSettings) -> Settings:
    settings = load_settings(None, **{"run.results_dir": str(tmp_path)})
    models = settings.models.model_copy(update={"timeout_s": 10.0, "retry_attempts": 3})
    return settings.model_copy(update={"providers": providers, "models": models})


def _judge(spec: ModelSpec, settings: Settings) -> tuple[LlmJudge, JudgeRequest]:
    """The judge as the judge stage builds it, with millisecond backoffs."""
    request = judge_request(spec, settings)
    policy = retry_policy(spec, settings.models)
    fast = dataclasses.replace(policy, base_s=0.001, throttle_base_s=0.001)
    return LlmJudge(spec.label, request, load_prompt_set(), fast), request


def _verdict(judge: LlmJudge) -> ScoreRow:
    return asyncio.run(
        judge.judge(
            question_id="q1",
            question_type="single-session-user",
            is_abstention=False,
            question="Where do I live now?",
            answer="Austin",
            hypothesis="You live in Austin.",
            repeat=0,
        )
    )


def _prompt_of(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_the_official_body_is_unchanged_field_for_field() -> None:
    body = official_body("gpt-4o-2024-08-06", "Is it right?")
    assert json.dumps(body) == json.dumps(
        {
            "model": "gpt-4o-2024-08-06",
            "messages": [{"role": "user", "content": "Is it right?"}],
            "n": 1,
            "temperature": 0,
            "max_tokens": 10,
        }
    )
    for model in ("gpt-4o-2024-08-06", "gpt-4.1-mini", "gpt-4o", "Qwen2.5-7B-Instruct"):
        assert request_shape("openai", model) is OFFICIAL
        assert request_shape("openai-compatible", model) is OFFICIAL


@pytest.mark.parametrize("kind", ["openai", "openai-compatible"])
def test_openai_chat_judges_send_the_official_body(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-canary")
    with serve([{"content": "yes"}]) as (url, fake):
        provider = ProviderSettings(kind=kind, base_url=url)  # type: ignore[arg-type]
        settings = _settings(tmp_path, gw=provider)
        judge, request = _judge(parse_model("judge", "gw:gpt-4o-2024-08-06", settings), settings)
        row = _verdict(judge)
    (body,) = fake.requests
    assert body == official_body("gpt-4o-2024-08-06", _prompt_of(body))
    assert isinstance(body["temperature"], int)  # 0, not 0.0, as the official script sends
    assert request.request_shape is OFFICIAL
    assert (row.status, row.label, row.readable) == ("ok", True, True)


@pytest.mark.parametrize("model", REASONING_MODELS)
def test_openai_reasoning_models_refuse_the_official_body(model: str) -> None:
    """The loopback server refuses what OpenAI refuses, so the shapes below are tested."""
    with serve([{"content": "yes"}]) as (url, fake):
        request = OfficialJudgeRequest(model, "k", url, timeout_s=10, shape=OFFICIAL)
        with pytest.raises(openai.BadRequestError) as refused:
            asyncio.run(request.ainvoke([HumanMessage("Is it right?")]))
    assert refused.value.code == "unsupported_parameter"
    assert refused.value.param == "max_tokens"
    assert len(fake.requests) == 1


@pytest.mark.parametrize("model", REASONING_MODELS)
def test_openai_reasoning_judges_send_the_nearest_accepted_body(
    model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-canary")
    with serve([{"content": "yes"}]) as (url, fake):
        settings = _settings(tmp_path, oai=ProviderSettings(kind="openai", base_url=url))
        judge, request = _judge(parse_model("judge", f"oai:{model}", settings), settings)
        row = _verdict(judge)
    (body,) = fake.requests  # accepted at once: no retry after a refusal
    assert body == request.request_shape.body(model, _prompt_of(body))
    assert "max_tokens" not in body and "temperature" not in body
    assert (body["n"], body["max_completion_tokens"]) == (1, REASONING_CAP)
    assert request.request_shape.family == "openai-reasoning"
    assert (row.status, row.label, row.capped_replies) == ("ok", True, 0)
    reasoning = REASONING_TOKENS[body.get("reasoning_effort")]
    assert row.output_tokens == 1 + reasoning  # the reasoning tokens are billed as output


def test_a_reasoning_model_given_ten_tokens_replies_with_nothing() -> None:
    """Why the reasoning shape has a larger cap: reasoning comes out of it first."""
    ten = RequestShape(
        "openai-reasoning",
        "POST /chat/completions",
        {"n": 1, "max_completion_tokens": 10, "reasoning_effort": "low"},
    )
    with serve([{"content": "yes"}]) as (url, _fake):
        request = OfficialJudgeRequest("o4-mini", "k", url, timeout_s=10, shape=ten)
        reply = asyncio.run(request.ainvoke([HumanMessage("Is it right?")]))
    assert reply.content == "" and was_capped(reply)


def test_anthropic_judge_over_the_messages_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    with serve_anthropic(
        [{"status": 429, "retry_after": "0"}, {"status": 529}, {"content": "Yes."}]
    ) as (
        url,
        fake,
    ):
        settings = _settings(tmp_path, claude=ProviderSettings(kind="anthropic", base_url=url))
        spec = parse_model("judge", f"claude:{CLAUDE}", settings)
        assert problems(spec) == []
        judge, request = _judge(spec, settings)
        row = _verdict(judge)
    assert fake.paths == ["/v1/messages"] * 3
    body = fake.bodies[-1]
    assert body == {
        "model": CLAUDE,
        "messages": [{"role": "user", "content": _prompt_of(body)}],
        "temperature": 0,
        "max_tokens": 10,
    }
    assert body == request.request_shape.body(CLAUDE, _prompt_of(body))
    assert fake.headers[-1]["anthropic-version"] == "2023-06-01"
    assert (row.status, row.label, row.readable) == ("ok", True, True)
    assert (row.retries_throttled, row.retries_server, row.llm_calls) == (1, 1, 1)
    assert (row.input_tokens, row.output_tokens) == (13, 1)
    assert fake.connections == 1  # one kept-alive connection for all three attempts


def test_the_messages_api_refuses_the_official_body_and_a_wrong_key() -> None:
    with serve_anthropic([{"content": "yes"}]) as (url, _fake):
        right = AnthropicMessages(API_KEY, url, timeout_s=10)
        with pytest.raises(AnthropicRequestError, match="n: Extra inputs are not permitted"):
            asyncio.run(right.create(official_body(CLAUDE, "Is it right?")))
        wrong = AnthropicMessages("sk-ant-wrong", url, timeout_s=10)
        with pytest.raises(AnthropicRequestError, match="401 authentication_error"):
            shape = request_shape("anthropic", CLAUDE)
            asyncio.run(wrong.create(shape.body(CLAUDE, "Is it right?")))


def test_a_capped_anthropic_reply_is_counted_as_capped() -> None:
    with serve_anthropic([{"content": "yes " * 20}]) as (url, _fake):
        api = CountedModel(_AnthropicOnce(AnthropicMessages(API_KEY, url, timeout_s=10)))
        reply = asyncio.run(api.ainvoke([HumanMessage("Is it right?")]))
    assert reply.response_metadata["stop_reason"] == "max_tokens"
    assert api.account.capped_replies == 1 and api.account.output_tokens == 10


class _AnthropicOnce:
    def __init__(self, api: AnthropicMessages) -> None:
        self.api = api

    async def ainvoke(self, messages: Any) -> Any:
        return await self.api.create(request_shape("anthropic", CLAUDE).body(CLAUDE, "Yes?"))


def test_anthropic_needs_its_key_and_judges_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = _settings(tmp_path)
    (missing,) = problems(parse_model("judge", f"anthropic:{CLAUDE}", settings))
    assert "set ANTHROPIC_API_KEY" in missing
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    (reader,) = problems(parse_model("qa", f"anthropic:{CLAUDE}", settings))
    assert "can only judge" in reader


def test_bedrock_judge_sends_exactly_its_converse_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_aws(monkeypatch, tmp_path)
    with serve_bedrock(["ok"], text="yes") as (url, fake):
        provider = ProviderSettings(kind="bedrock", region="us-east-1", base_url=url)
        settings = _settings(tmp_path, bedrock=provider)
        spec = parse_model("judge", f"bedrock:{BEDROCK_CLAUDE}", settings)
        judge, request = _judge(spec, settings)
        row = _verdict(judge)
    (body,) = fake.bodies
    assert body == request.request_shape.body(BEDROCK_CLAUDE, _prompt_of(body))
    assert body["inferenceConfig"] == {"maxTokens": 10, "temperature": 0}
    assert (row.status, row.label) == ("ok", True)


def test_the_manifest_records_each_judges_shape_without_prompt_or_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    settings = _settings(tmp_path)
    settings = settings.model_copy(
        update={
            "models": settings.models.model_copy(update={"judge": "openai:gpt-5-mini"}),
            "judge": settings.judge.model_copy(update={"second_model": f"anthropic:{CLAUDE}"}),
        }
    )
    shapes = judge_request_shapes(settings)
    assert shapes["openai:gpt-5-mini"] == {
        "family": "openai-reasoning",
        "endpoint": "POST /chat/completions",
        "body": {
            "model": "gpt-5-mini",
            "messages": [{"role": "user", "content": PROMPT}],
            "n": 1,
            "max_completion_tokens": REASONING_CAP,
            "reasoning_effort": "minimal",
        },
        "differs_from_official": shapes["openai:gpt-5-mini"]["differs_from_official"],
    }
    assert "max_completion_tokens" in shapes["openai:gpt-5-mini"]["differs_from_official"]
    assert shapes[f"anthropic:{CLAUDE}"]["body"]["max_tokens"] == 10
    assert API_KEY not in json.dumps(shapes)


def _reader_and_reasoning_judge(body: dict[str, Any]) -> dict[str, Any]:
    if body["model"] == "gpt-5-mini":
        said = body["messages"][0]["content"].split("Model response:")[-1]
        return {"content": "yes" if "Max" in said else "no"}
    return {"content": "Your dog is Max."}


def test_a_run_with_a_reasoning_judge_records_the_shape_it_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_KEY", "sk-local-canary")
    with serve([_reader_and_reasoning_judge]) as (url, fake):
        settings = load_settings(None, **{"run.results_dir": str(tmp_path), "run.id": "shapes"})
        settings = settings.model_copy(
            update={
                "models": settings.models.model_copy(
                    update={"qa": "local:reader", "judge": "local:gpt-5-mini"}
                ),
                "providers": {"local": ProviderSettings(base_url=url, api_key_env="LOCAL_KEY")},
            }
        )
        run_dir, summary = run_answer_and_judge(settings, limit=2)
    judge_bodies = [b for b in fake.requests if b["model"] == "gpt-5-mini"]
    assert len(judge_bodies) == 2
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (recorded,) = manifest["models"]["judge_requests"].values()
    for body in judge_bodies:
        assert body == {**recorded["body"], "messages": body["messages"]}
    assert recorded["body"]["messages"] == [{"role": "user", "content": PROMPT}]
    assert summary["qa"]["judges"]["local:gpt-5-mini"]["overall"]["correct"] == 2
    assert "sk-local-canary" not in json.dumps(manifest)
