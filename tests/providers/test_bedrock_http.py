"""Bedrock through botocore over real HTTP, against a loopback stand-in for its runtime
endpoint: botocore makes one attempt per call, so every retry is ours and counted by cause,
and `timeout_s` bounds each read. Fake credentials only; nothing leaves the machine."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError
from langchain_core.messages import AIMessage, HumanMessage

from lme_bench.config.settings import ModelsSettings, ProviderSettings
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.factory import ModelSpec, build_chat_model, retry_policy
from lme_bench.providers.faults import classify
from tests.providers.aws_env import use_fake_aws
from tests.providers.fake_bedrock_server import serve_bedrock

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture(autouse=True)
def fake_aws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials, no AWS files or instance metadata, and an environment asking
    botocore for retries of its own, which the client's settings must override."""
    use_fake_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")
    monkeypatch.setenv("AWS_RETRY_MODE", "legacy")


def _counted(url: str, models: ModelsSettings) -> CountedModel:
    """The Bedrock model as the factory builds it, called the way every stage calls it, with
    the Bedrock retry policy's attempts but millisecond backoffs."""
    settings = ProviderSettings(kind="bedrock", region="us-east-1", base_url=url)
    spec = ModelSpec("qa", "bedrock", MODEL, "bedrock", settings)
    policy = dataclasses.replace(retry_policy(spec, models), base_s=0.001, throttle_base_s=0.001)
    return CountedModel(build_chat_model(spec, models, 512), policy)


def _ask(model: CountedModel) -> AIMessage:
    return asyncio.run(model.ainvoke([HumanMessage("Where do I live now?")]))


def test_throttling_and_server_errors_are_retried_by_us_alone() -> None:
    with serve_bedrock(["throttled", "unavailable", "ok"]) as (url, fake):
        model = _counted(url, ModelsSettings(retry_attempts=3))
        reply = _ask(model)
    assert reply.content == "Austin." or reply.text == "Austin."
    assert fake.requests == 3  # one per attempt of ours: botocore retried none of them
    assert fake.paths[0] == f"/model/{quote(MODEL, safe='')}/converse"
    assert model.account.retries.columns() == {
        "retries": 2,
        "retries_throttled": 1,
        "retries_timeout": 0,
        "retries_connection": 0,
        "retries_server": 1,
    }
    assert (model.account.calls, model.account.input_tokens) == (1, 12)


def test_a_call_throttled_every_time_makes_exactly_our_attempts() -> None:
    with serve_bedrock(["throttled"]) as (url, fake):
        model = _counted(url, ModelsSettings(retry_attempts=2))
        with pytest.raises(ClientError) as raised:
            _ask(model)
    assert classify(raised.value) == ("throttled", None)
    assert fake.requests == 2
    assert model.account.retries.throttled == 1 and model.account.calls == 0


def test_a_slow_reply_times_out_after_timeout_s() -> None:
    timeout_s = 0.5
    with serve_bedrock(["slow"], slow_s=30.0) as (url, fake):
        model = _counted(url, ModelsSettings(retry_attempts=2, timeout_s=timeout_s))
        started = time.monotonic()
        with pytest.raises(ReadTimeoutError) as raised:
            _ask(model)
        waited = time.monotonic() - started
        assert not fake.released.is_set()  # no reply came: the client stopped waiting
    assert classify(raised.value) == ("timeout", None)
    assert fake.requests == 2 and model.account.retries.timeout == 1
    assert waited >= 2 * timeout_s  # each attempt waited its read timeout out
