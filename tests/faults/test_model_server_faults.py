"""An OpenAI-compatible server that drops connections, answers 5xx, stalls, or is slow, against
the provider code a run uses: the chat model the factory builds and the official judge request,
each called through CountedModel with its retry policy. Transient faults are retried and
counted by cause, a stall ends at `[models] timeout_s` and counts as a timeout, latency within
the timeout is no fault, and the output cap keeps a long slow reply short."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from lme_bench.config.settings import ModelsSettings, ProviderSettings
from lme_bench.judge.official_request import MAX_TOKENS, OfficialJudgeRequest
from lme_bench.providers.calls import CountedModel, text_of
from lme_bench.providers.factory import ModelSpec, build_chat_model, retry_policy
from tests.providers.behaviour import Behaviour
from tests.providers.fake_openai_server import serve

CLIENTS = ["chat", "judge"]
CHAT_CAP = 16
OK = {"content": "yes"}


def _counted(client: str, url: str, timeout_s: float = 10.0, attempts: int = 4) -> CountedModel:
    """The chat model or the judge request as a run builds it, with millisecond backoffs."""
    settings = ProviderSettings(kind="openai-compatible", base_url=url)
    spec = ModelSpec("qa", "local", "tiny-llm", "openai-compatible", settings)
    models = ModelsSettings(timeout_s=timeout_s, retry_attempts=attempts)
    policy = dataclasses.replace(retry_policy(spec, models), base_s=0.001, throttle_base_s=0.001)
    if client == "judge":
        judge = OfficialJudgeRequest("gpt-4o-2024-08-06", "sk-test", url, timeout_s=timeout_s)
        return CountedModel(judge, policy)
    return CountedModel(build_chat_model(spec, models, CHAT_CAP), policy)


def _ask(model: CountedModel, times: int = 1) -> list[AIMessage]:
    async def calls() -> list[AIMessage]:
        return [await model.ainvoke([HumanMessage("Is the answer right?")]) for _ in range(times)]

    return asyncio.run(calls())


def _retries(**counts: int) -> dict[str, int]:
    by_cause = {"throttled": 0, "timeout": 0, "connection": 0, "server": 0} | counts
    return {"retries": sum(by_cause.values())} | {f"retries_{c}": n for c, n in by_cause.items()}


def _with(behaviour: Behaviour, reply: dict[str, Any] = OK) -> dict[str, Any]:
    return {**reply, "behaviour": behaviour}


@pytest.mark.parametrize("client", CLIENTS)
def test_dropped_connections_are_retried_as_connection_faults(client: str) -> None:
    before_reply = _with(Behaviour(fault="drop"))
    mid_body = _with(Behaviour(fault="drop", after_tokens=1))
    with serve([before_reply, mid_body, OK]) as (url, fake):
        model = _counted(client, url)
        (reply,) = _ask(model)
    assert text_of(reply) == "yes"
    assert model.account.retries.columns() == _retries(connection=2)
    assert (model.account.calls, model.account.timeouts) == (1, 0)
    assert len(fake.requests) == 3 and fake.connections == 3  # a dropped one is not reused


@pytest.mark.parametrize("client", CLIENTS)
def test_server_errors_are_retried_as_server_faults(client: str) -> None:
    errors = [_with(Behaviour(status=status)) for status in (500, 502, 503)]
    with serve([*errors, OK]) as (url, fake):
        model = _counted(client, url)
        (reply,) = _ask(model)
    assert text_of(reply) == "yes"
    assert model.account.retries.columns() == _retries(server=3)
    assert len(fake.requests) == 4 and model.account.calls == 1


@pytest.mark.parametrize("client", CLIENTS)
def test_a_stall_past_timeout_s_is_retried_as_a_timeout(client: str) -> None:
    timeout_s = 1.0
    stalls = [_with(Behaviour(fault="stall")), _with(Behaviour(fault="stall", after_tokens=1))]
    with serve([*stalls, OK]) as (url, fake):
        model = _counted(client, url, timeout_s=timeout_s)
        started = time.monotonic()
        (reply,) = _ask(model)
        waited = time.monotonic() - started
    assert text_of(reply) == "yes"
    assert model.account.retries.columns() == _retries(timeout=2)
    assert model.account.timeouts == 2 and len(fake.requests) == 3
    assert waited >= 2 * timeout_s  # each stalled attempt waited its timeout out


def test_attempts_used_up_by_faults_fail_the_call_with_each_counted() -> None:
    with serve([_with(Behaviour(status=503)), _with(Behaviour(fault="drop"))]) as (url, fake):
        model = _counted("chat", url, attempts=3)
        with pytest.raises(openai.APIConnectionError):
            _ask(model)
    assert len(fake.requests) == 3 and model.account.calls == 0
    assert model.account.retries.columns() == _retries(server=1, connection=1)


@pytest.mark.parametrize("client", CLIENTS)
def test_latency_within_the_timeout_is_no_fault_and_connections_are_kept(client: str) -> None:
    with serve([OK], behaviour=Behaviour(latency_s=0.4)) as (url, fake):
        model = _counted(client, url, timeout_s=5.0)
        replies = _ask(model, times=3)
    assert [text_of(r) for r in replies] == ["yes"] * 3
    assert model.account.retries.retries == 0 and model.account.calls == 3
    assert model.account.seconds >= 3 * 0.4
    assert fake.connections == 1 and len(set(fake.peers)) == 1  # one kept-alive connection


@pytest.mark.parametrize("client", CLIENTS)
def test_the_output_cap_keeps_a_long_slow_reply_within_the_timeout(client: str) -> None:
    # uncapped, this reply would take 20 s, past the 2 s timeout on every attempt
    rambling = Behaviour(length=2000, tokens_per_s=100)
    with serve([OK], behaviour=rambling) as (url, fake):
        model = _counted(client, url, timeout_s=2.0)
        (reply,) = _ask(model)
    cap = MAX_TOKENS if client == "judge" else CHAT_CAP
    assert fake.requests[0]["max_tokens"] == cap
    assert len(text_of(reply).split()) == cap
    assert model.account.output_tokens == cap and model.account.capped_replies == 1
    assert model.account.retries.retries == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_a_reply_cut_by_its_cap_is_counted_as_capped(client: str) -> None:
    with serve([OK], behaviour=Behaviour(length=40)) as (url, _):
        model = _counted(client, url)
        _ask(model)
        _ask(model)
    assert model.account.capped_replies == 2 and model.account.calls == 2
