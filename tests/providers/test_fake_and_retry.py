from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import openai
import pytest
from botocore import exceptions as boto
from botocore.exceptions import ClientError
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.retry import RetryCount, RetryPolicy, call_with_retry, classify


@tool
def put_context(content: str) -> str:
    """Replace the memory's context document."""
    return "enqueued"


def test_scripted_model_emits_tool_calls_and_records_what_it_was_sent() -> None:
    call = {"name": "put_context", "args": {"content": "Facts: none"}, "id": "c1"}
    model = ScriptedChatModel(script=[AIMessage(content="", tool_calls=[call]), "done"])
    first = model.bind_tools([put_context]).invoke([HumanMessage("observe: hello")])
    second = model.invoke("anything")
    third = model.invoke("again")
    assert first.tool_calls[0]["name"] == "put_context"
    assert (second.content, third.content) == ("done", "done")  # the last reply repeats
    calls = model.calls
    assert calls[0].tools == ["put_context"] and calls[1].tools == []
    assert calls[0].messages[0].content == "observe: hello"
    assert first.usage_metadata is not None and first.usage_metadata["input_tokens"] == 2


def test_scripted_model_replies_from_functions_and_echoes_by_default() -> None:
    echo = ScriptedChatModel()
    assert echo.invoke("repeat me").content == "repeat me"
    upper = ScriptedChatModel(script=[lambda messages: str(messages[-1].content).upper()])
    assert upper.invoke("loud").content == "LOUD"


def test_scripted_model_throttles_and_waits() -> None:
    model = ScriptedChatModel(throttle_every=2, latency_s=0.01, script=["ok"])
    assert model.invoke("1").content == "ok"
    with pytest.raises(ProviderThrottled):
        model.invoke("2")
    assert model.invoke("3").content == "ok"
    assert model.attempts == 3 and len(model.calls) == 2


def _openai_error(status: int, retry_after: str | None = None) -> openai.APIStatusError:
    headers = {"retry-after": retry_after} if retry_after else {}
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    cls = {429: openai.RateLimitError, 500: openai.InternalServerError}.get(
        status, openai.BadRequestError
    )
    return cls("error", response=response, body=None)


_REQUEST = httpx.Request("POST", "http://x/v1/chat/completions")


def _boto_error(code: str, status: int = 400) -> ClientError:
    response: Any = {
        "Error": {"Code": code, "Message": "m"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, "Converse")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (_openai_error(429, "7"), ("throttled", 7.0)),
        (_openai_error(500, "2"), ("server", 2.0)),
        (_openai_error(400), (None, None)),
        (openai.APITimeoutError(request=_REQUEST), ("timeout", None)),
        (openai.APIConnectionError(request=_REQUEST), ("connection", None)),
        (_boto_error("ThrottlingException"), ("throttled", None)),
        (_boto_error("ServiceUnavailableException"), ("server", None)),
        (_boto_error("ModelTimeoutException"), ("timeout", None)),
        (_boto_error("SomethingNew", status=503), ("server", None)),
        (_boto_error("SomethingNew", status=429), ("throttled", None)),
        (_boto_error("ValidationException", status=400), (None, None)),
        (boto.ReadTimeoutError(endpoint_url="http://x"), ("timeout", None)),
        (boto.ConnectTimeoutError(endpoint_url="http://x"), ("timeout", None)),
        (boto.EndpointConnectionError(endpoint_url="http://x"), ("connection", None)),
        (boto.ConnectionClosedError(endpoint_url="http://x"), ("connection", None)),
        (ProviderThrottled("slow down", 4.0), ("throttled", 4.0)),
        (ProviderUnavailable("503"), ("server", None)),
        (ProviderUnavailable("slow", "timeout"), ("timeout", None)),
        (TimeoutError(), ("timeout", None)),
        (ConnectionResetError(), ("connection", None)),
        (ValueError("bad prompt"), (None, None)),
    ],
)
def test_classify(error: BaseException, expected: tuple[Any, Any]) -> None:
    assert classify(error) == expected


def test_backoff_grows_exponentially_with_jitter_and_caps() -> None:
    policy = RetryPolicy(base_s=1, cap_s=8, throttle_base_s=5, throttle_cap_s=600, jitter=0.25)
    rng = random.Random(1)
    transient = [policy.delay("server", r, None, rng) for r in range(6)]
    for retry, wait in enumerate(transient):
        nominal = min(8, 2**retry)
        assert 0.75 * nominal <= wait <= 1.25 * nominal
    throttled = policy.delay("throttled", 0, None, rng)
    assert 3.75 <= throttled <= 6.25  # longer first wait for throttling (e.g. Bedrock)


def test_non_retryable_error_fails_at_once_and_attempts_are_bounded() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def bad() -> None:
        raise ValueError("invalid request")

    with pytest.raises(ValueError):
        asyncio.run(call_with_retry(bad, RetryPolicy(), sleep=sleep))
    assert waits == []

    model = ScriptedChatModel(throttle_every=1)
    count = RetryCount()
    with pytest.raises(ProviderThrottled):
        asyncio.run(
            call_with_retry(
                lambda: model.ainvoke("x"), RetryPolicy(attempts=3), count=count, sleep=sleep
            )
        )
    assert model.attempts == 3 and count.retries == 2 and len(waits) == 2


def test_retries_are_counted_by_cause_and_sum_to_the_total() -> None:
    async def no_wait(seconds: float) -> None:
        pass

    faults: list[Exception] = [
        ProviderThrottled("429"),
        TimeoutError(),
        ProviderThrottled("429"),
        ConnectionResetError(),
        ProviderUnavailable("503"),
    ]

    async def flaky() -> str:
        if faults:
            raise faults.pop(0)
        return "ok"

    count = RetryCount()
    assert asyncio.run(call_with_retry(flaky, RetryPolicy(), count=count, sleep=no_wait)) == "ok"
    assert count.columns() == {
        "retries": 5,
        "retries_throttled": 2,
        "retries_timeout": 1,
        "retries_connection": 1,
        "retries_server": 1,
    }


def test_scripted_model_faults_with_the_cause_it_is_given() -> None:
    model = ScriptedChatModel(throttle_every=2, fault_every=3, fault_cause="timeout")
    outcomes = []
    for _ in range(6):
        try:
            model.invoke("x")
            outcomes.append("ok")
        except Exception as exc:
            outcomes.append(classify(exc)[0])
    # the 6th call is due both ways: a throttle comes first
    assert outcomes == ["ok", "throttled", "timeout", "throttled", "ok", "throttled"]
