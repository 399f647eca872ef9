"""A Bedrock runtime endpoint that drops connections, answers 5xx, stalls, or is slow, against
the provider code a run uses: the Bedrock chat model the factory builds (through botocore, on
a [providers] base_url), called through CountedModel with the Bedrock retry policy. Transient
faults are retried by us alone and counted by cause; a stall ends at `[models] timeout_s`."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from lme_bench.config.settings import ModelsSettings, ProviderSettings
from lme_bench.providers.calls import CountedModel, text_of
from lme_bench.providers.factory import ModelSpec, build_chat_model, retry_policy
from tests.providers.aws_env import use_fake_aws
from tests.providers.behaviour import Behaviour
from tests.providers.fake_bedrock_server import serve_bedrock

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
CAP = 16


@pytest.fixture(autouse=True)
def fake_aws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")  # botocore's own retries: the client's are off


def _counted(url: str, timeout_s: float = 10.0, attempts: int = 4) -> CountedModel:
    settings = ProviderSettings(kind="bedrock", region="us-east-1", base_url=url)
    spec = ModelSpec("qa", "bedrock", MODEL, "bedrock", settings)
    models = ModelsSettings(timeout_s=timeout_s, retry_attempts=attempts)
    policy = dataclasses.replace(retry_policy(spec, models), base_s=0.001, throttle_base_s=0.001)
    return CountedModel(build_chat_model(spec, models, CAP), policy)


def _ask(model: CountedModel, times: int = 1) -> list[AIMessage]:
    async def calls() -> list[AIMessage]:
        return [await model.ainvoke([HumanMessage("Where do I live?")]) for _ in range(times)]

    return asyncio.run(calls())


def _retries(**counts: int) -> dict[str, int]:
    by_cause = {"throttled": 0, "timeout": 0, "connection": 0, "server": 0} | counts
    return {"retries": sum(by_cause.values())} | {f"retries_{c}": n for c, n in by_cause.items()}


def test_a_connection_dropped_before_the_reply_is_retried_as_a_connection_fault() -> None:
    with serve_bedrock([Behaviour(fault="drop"), "ok"]) as (url, fake):
        model = _counted(url)
        (reply,) = _ask(model)
    assert text_of(reply) == "Austin."
    assert model.account.retries.columns() == _retries(connection=1)
    assert fake.requests == 2 and model.account.calls == 1


def test_a_connection_dropped_mid_body_is_retried_as_a_connection_fault() -> None:
    with serve_bedrock([Behaviour(fault="drop", after_tokens=1), "ok"]) as (url, fake):
        model = _counted(url)
        (reply,) = _ask(model)
    assert text_of(reply) == "Austin."
    assert model.account.retries.columns() == _retries(connection=1)
    assert fake.requests == 2


def test_server_errors_are_retried_as_server_faults() -> None:
    errors = [Behaviour(status=status) for status in (500, 502, 503)]
    with serve_bedrock([*errors, "ok"]) as (url, fake):
        model = _counted(url)
        (reply,) = _ask(model)
    assert text_of(reply) == "Austin."
    assert model.account.retries.columns() == _retries(server=3)
    assert fake.requests == 4  # one per attempt of ours: botocore retried none of them


def test_a_stall_past_timeout_s_is_retried_as_a_timeout() -> None:
    timeout_s = 1.0
    stalls = [Behaviour(fault="stall"), Behaviour(fault="stall", after_tokens=1)]
    with serve_bedrock([*stalls, "ok"]) as (url, fake):
        model = _counted(url, timeout_s=timeout_s)
        started = time.monotonic()
        (reply,) = _ask(model)
        waited = time.monotonic() - started
    assert text_of(reply) == "Austin."
    assert model.account.retries.columns() == _retries(timeout=2)
    assert model.account.timeouts == 2 and fake.requests == 3
    assert waited >= 2 * timeout_s


def test_latency_within_the_timeout_is_no_fault_and_connections_are_kept() -> None:
    with serve_bedrock([Behaviour(latency_s=0.4)]) as (url, fake):
        model = _counted(url, timeout_s=5.0)
        replies = _ask(model, times=3)
    assert [text_of(r) for r in replies] == ["Austin."] * 3
    assert model.account.retries.retries == 0 and model.account.calls == 3
    assert model.account.seconds >= 3 * 0.4
    assert fake.connections == 1 and len(set(fake.peers)) == 1


def test_the_output_cap_keeps_a_long_slow_reply_within_the_timeout() -> None:
    # uncapped, this reply would take 20 s, past the 2 s timeout on every attempt
    with serve_bedrock([Behaviour(length=2000, tokens_per_s=100)]) as (url, fake):
        model = _counted(url, timeout_s=2.0)
        (reply,) = _ask(model)
    assert fake.bodies[0]["inferenceConfig"]["maxTokens"] == CAP
    assert len(text_of(reply).split()) == CAP
    assert model.account.output_tokens == CAP and model.account.capped_replies == 1
    assert model.account.retries.retries == 0
