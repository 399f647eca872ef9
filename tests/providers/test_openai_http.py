"""The OpenAI path over real HTTP against a loopback OpenAI-compatible fake server."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from lme_bench.config.settings import load_settings
from lme_bench.providers.factory import build_chat_model, check_models, parse_model
from lme_bench.providers.retry import RetryCount, RetryPolicy, call_with_retry
from tests.providers.fake_openai_server import serve


@tool
def add_entry(summary: str) -> str:
    """Store one memory entry."""
    return "enqueued"


def _model(  # type: ignore[no-untyped-def]
    base_url: str, monkeypatch: pytest.MonkeyPatch, max_tokens: int = 512, **models: object
):
    monkeypatch.setenv("LOCAL_KEY", "sk-local-canary")
    settings = load_settings(None)
    settings = settings.model_copy(
        update={
            "providers": {"local": settings.providers.get("local") or _provider(base_url)},
            "models": settings.models.model_copy(update={"qa": "local:tiny-llm", **models}),
        }
    )
    (spec,) = check_models(settings, roles=("qa",))
    return build_chat_model(spec, settings.models, max_tokens)


def _provider(base_url: str):  # type: ignore[no-untyped-def]
    from lme_bench.config.settings import ProviderSettings

    return ProviderSettings(kind="openai-compatible", base_url=base_url, api_key_env="LOCAL_KEY")


def test_plain_reply_with_usage_key_and_params(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve([{"content": "Blue."}]) as (url, fake):
        model = _model(url, monkeypatch, temperature=0.0, seed=7, max_tokens=10)
        reply = model.invoke([HumanMessage("What colour?")])
    assert reply.content == "Blue."
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] == 11
    body = fake.requests[0]
    assert body["model"] == "tiny-llm" and body["temperature"] == 0.0 and body["seed"] == 7
    # the cap in the field every OpenAI-compatible server reads (llama.cpp ignores the other)
    assert body["max_tokens"] == 10 and "max_completion_tokens" not in body
    assert body["messages"][-1] == {"role": "user", "content": "What colour?"}
    assert fake.headers[0]["authorization"] == "Bearer sk-local-canary"


def test_tool_calls_non_streaming_and_streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = {"tool_calls": [("add_entry", {"summary": "User owns a golden retriever."})]}
    with serve([reply]) as (url, fake):
        model = _model(url, monkeypatch).bind_tools([add_entry])
        message = model.invoke([HumanMessage("I have a golden retriever.")])
        streamed = None
        for chunk in model.stream([HumanMessage("I have a golden retriever.")]):
            streamed = chunk if streamed is None else streamed + chunk
    for result in (message, streamed):
        assert result is not None
        assert [(c["name"], c["args"]) for c in result.tool_calls] == [
            ("add_entry", {"summary": "User owns a golden retriever."})
        ]
    assert fake.requests[0]["tools"][0]["function"]["name"] == "add_entry"
    assert fake.requests[1]["stream"] is True


def test_429_with_retry_after_is_retried_inside_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    with serve([{"status": 429, "retry_after": "3"}, {"content": "ok"}]) as (url, fake):
        model = _model(url, monkeypatch)
        count = RetryCount()
        reply = asyncio.run(
            call_with_retry(
                lambda: model.ainvoke([HumanMessage("hi")]), RetryPolicy(), count=count, sleep=sleep
            )
        )
    assert reply.content == "ok"
    assert (count.retries, count.throttled) == (1, 1)
    assert waits and waits[0] >= 3.0  # Retry-After honoured
    assert len(fake.requests) == 2  # the SDK's own retries are off: each attempt is ours


def test_unknown_provider_is_one_clear_error() -> None:
    settings = load_settings(None)
    known = r"known: anthropic, bedrock, fake, openai"
    with pytest.raises(ValueError, match=rf"unknown provider 'nope'.*{known}"):
        parse_model("qa", "nope:model", settings)
