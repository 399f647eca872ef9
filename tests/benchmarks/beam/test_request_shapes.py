"""The request BEAM's judge records for the manifest is the request it sends, for each provider
kind a judge can have: the judge's chat calls (as the run builds them) go to a loopback fake of
the provider's API, a rubric prompt alone and an equivalence question with its system text, and
each body received, its messages left out, is the recorded body."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from lme_bench.builtin_benchmarks.beam.judge_stage import (
    BEAM_JUDGE_MAX_TOKENS,
    REQUEST_DIFFERS,
    REQUEST_FAMILY,
    RUBRIC_JUDGE,
    beam_judges,
)
from lme_bench.config.settings import ProviderSettings, Settings
from lme_bench.judge.family_requests import judge_request_shapes
from tests.benchmarks.beam.samples import write_checkout
from tests.providers.aws_env import use_fake_aws
from tests.providers.fake_anthropic_server import API_KEY as ANTHROPIC_KEY
from tests.providers.fake_anthropic_server import serve_anthropic
from tests.providers.fake_bedrock_server import serve_bedrock
from tests.providers.fake_openai_server import serve

KEY = "LAB_BEAM_SHAPE_KEY"
CALLS: list[list[BaseMessage]] = [
    [HumanMessage("Rubric item: the answer names the city")],
    [SystemMessage("Say YES or NO."), HumanMessage("A: the move | B: they moved")],
]


def _settings(tmp_path: Path, judge: str, provider: ProviderSettings) -> Settings:
    checkout = write_checkout(tmp_path)
    return Settings.model_validate(
        {
            "models": {"judge": judge},
            "providers": {"lab": provider},
            "judge": {"beam_repo": str(checkout)},
        }
    )


def _sent(settings: Settings) -> None:
    (named,) = beam_judges(settings)
    for messages in CALLS:
        asyncio.run(named.judge.model.ainvoke(messages))


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv(KEY, ANTHROPIC_KEY)
    use_fake_aws(monkeypatch, tmp_path)
    yield


Served = Callable[[], AbstractContextManager[tuple[str, Any]]]


def _openai() -> AbstractContextManager[tuple[str, Any]]:
    return serve([{"content": '{"score": 1}'}])


def _bodies_and_paths(fake: Any) -> tuple[list[dict[str, Any]], list[str]]:
    if hasattr(fake, "paths"):
        return list(fake.bodies), list(fake.paths)
    return list(fake.requests), ["/chat/completions"] * len(fake.requests)


@pytest.mark.parametrize(
    ("kind", "model", "served", "cap_field", "path"),
    [
        ("openai-compatible", "qwen2.5-7b", _openai, "max_tokens", "/chat/completions"),
        ("openai", "gpt-4o-2024-08-06", _openai, "max_completion_tokens", "/chat/completions"),
        (
            "anthropic",
            "claude-3-5-haiku-20241022",
            lambda: serve_anthropic([{"content": "YES"}]),
            "max_tokens",
            "/v1/messages",
        ),
    ],
)
def test_the_recorded_chat_request_is_the_body_each_call_sends(
    tmp_path: Path, kind: str, model: str, served: Served, cap_field: str, path: str
) -> None:
    with served() as (url, fake):
        provider = ProviderSettings(kind=kind, base_url=url, api_key_env=KEY)
        settings = _settings(tmp_path, f"lab:{model}", provider)
        recorded = RUBRIC_JUDGE.request_shapes(settings)[f"lab:{model}"]
        _sent(settings)
    bodies, paths = _bodies_and_paths(fake)
    assert len(bodies) == len(CALLS)
    assert recorded["family"] == REQUEST_FAMILY
    method, recorded_path = recorded["endpoint"].split(" ")
    assert method == "POST" and paths == [recorded_path] * len(CALLS) == [path] * len(CALLS)
    for body in bodies:
        sent = {k: v for k, v in body.items() if k not in ("messages", "system")}
        assert sent == recorded["body"]
        assert sent["model"] == model
        assert sent[cap_field] == BEAM_JUDGE_MAX_TOKENS and sent["temperature"] == 0
    # Not the LongMemEval judge's request (its cap of 10 tokens).
    assert judge_request_shapes(settings)[f"lab:{model}"]["body"] != recorded["body"]


def test_the_recorded_converse_request_is_the_body_each_bedrock_call_sends(
    tmp_path: Path,
) -> None:
    model = "anthropic.claude-3-5-haiku-20241022-v1:0"
    with serve_bedrock(["ok"]) as (url, fake):
        provider = ProviderSettings(kind="bedrock", region="us-east-1", base_url=url)
        settings = _settings(tmp_path, f"lab:{model}", provider)
        recorded = RUBRIC_JUDGE.request_shapes(settings)[f"lab:{model}"]
        _sent(settings)
    assert recorded["endpoint"] == f"POST /model/{model}/converse"
    assert [p.replace("%3A", ":") for p in fake.paths] == [f"/model/{model}/converse"] * 2
    for body in fake.bodies:
        sent = {k: v for k, v in body.items() if k not in ("messages", "system")}
        assert sent == recorded["body"]
        assert sent["inferenceConfig"] == {"maxTokens": BEAM_JUDGE_MAX_TOKENS, "temperature": 0}
    assert [b["system"] for b in fake.bodies] == [[], [{"text": "Say YES or NO."}]]


def test_the_fake_judge_records_its_cap_and_that_nothing_is_sent(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "fake:rubric-judge", ProviderSettings(kind="fake"))
    recorded = RUBRIC_JUDGE.request_shapes(settings)
    assert recorded == {
        "fake:rubric-judge": {
            "family": REQUEST_FAMILY,
            "endpoint": "in process (no request)",
            "body": {"model": "rubric-judge", "max_tokens": BEAM_JUDGE_MAX_TOKENS},
            "differs_from_official": REQUEST_DIFFERS,
        }
    }
    assert f"{BEAM_JUDGE_MAX_TOKENS} tokens" in REQUEST_DIFFERS
    (named,) = beam_judges(settings)
    assert named.judge.model.max_tokens == BEAM_JUDGE_MAX_TOKENS  # type: ignore[attr-defined]
