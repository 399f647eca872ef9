"""A failed model call's error names the role, the model and the endpoint, never the key: over
real HTTP to a loopback port that refuses connections and to a fake server answering 500s."""

from __future__ import annotations

import asyncio
import socket

import pytest
from langchain_core.messages import HumanMessage

from lme_bench.config.settings import Settings
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.memory_model import memory_chat_model
from lme_bench.providers.retry import RetryPolicy
from lme_bench.run.collect import error_text
from tests.providers.fake_openai_server import serve

pytest.importorskip("langchain_openai", reason="OpenAI models need lme-bench's core install")

SECRET = "sk-test-do-not-print-4242"
QUICK = RetryPolicy(attempts=2, base_s=0.0, cap_s=0.0, jitter=0.0)


def _refusing_url() -> str:
    """A loopback URL nothing listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _settings(base_url: str, **models: str) -> Settings:
    return Settings.model_validate(
        {
            "providers": {
                "local": {"kind": "openai-compatible", "base_url": base_url, "api_key_env": "K"}
            },
            "models": models,
        }
    )


def _failure(settings: Settings, role: str) -> BaseException:
    """The error of a call by the model `role` names, built as the run builds it."""
    from lme_bench.providers.factory import build_chat_model, parse_model

    spec = parse_model(role, getattr(settings.models, role), settings)
    model = build_chat_model(spec, settings.models, 64)
    with pytest.raises(Exception) as raised:
        asyncio.run(CountedModel(model, QUICK).ainvoke([HumanMessage("hi")]))
    return raised.value


def test_a_refused_connection_names_the_reader_its_model_and_the_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("K", SECRET)
    url = _refusing_url()
    error = _failure(_settings(url, qa="local:tiny"), "qa")
    text = error_text(error)
    assert text.startswith("OpenAIConnectionError: Connection error.")
    assert f"(reader local:tiny at {url})" in text and SECRET not in text


def test_a_server_answering_500_names_the_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("K", SECRET)
    with serve([{"status": 500}]) as (url, fake):
        error = _failure(_settings(url, judge="local:judge-model"), "judge")
    assert len(fake.requests) == 2  # retried, then given up
    text = error_text(error)
    assert "Error code: 500" in text and f"(judge local:judge-model at {url})" in text
    assert SECRET not in text and SECRET not in repr(error.args)


def test_the_memory_systems_model_and_the_agent_name_their_role(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("K", SECRET)
    url = _refusing_url().replace("http://", f"http://user:{SECRET}@")  # a key in the URL
    settings = _settings(url, memory="local:mem", agent="local:writer")
    memory = memory_chat_model(settings)
    assert memory is not None
    with pytest.raises(Exception) as raised:
        asyncio.run(memory.model_copy(update={"policy": QUICK}).ainvoke([HumanMessage("hi")]))
    host = url.replace(f"user:{SECRET}@", "")
    assert f"(memory local:mem at {host})" in error_text(raised.value)
    agent = error_text(_failure(settings, "agent"))
    assert f"(agent local:writer at {host})" in agent and SECRET not in agent


@pytest.mark.parametrize("kind", ["openai-compatible", "anthropic"])
def test_the_judge_stages_own_requests_name_the_judge(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge stage calls the official request (openai SDK) or Anthropic's Messages API
    without LangChain: their errors name the judge, its model and its endpoint too."""
    from lme_bench.builtin_benchmarks.beam.judge_stage import _beam_model
    from lme_bench.judge.family_requests import judge_request
    from lme_bench.providers.factory import parse_model

    monkeypatch.setenv("K", SECRET)
    url = _refusing_url()
    settings = Settings.model_validate(
        {
            "providers": {"far": {"kind": kind, "base_url": url, "api_key_env": "K"}},
            "models": {"judge": "far:judge-model"},
        }
    )
    spec = parse_model("judge", "far:judge-model", settings)
    calls = [judge_request(spec, settings)]
    if kind == "anthropic":  # BEAM's rubric judge takes its own call
        calls.append(_beam_model(spec, settings, settings.models))
    for call in calls:
        with pytest.raises(Exception) as raised:
            asyncio.run(CountedModel(call, QUICK).ainvoke([HumanMessage("hi")]))
        text = error_text(raised.value)
        assert f"(judge far:judge-model at {url}" in text, text
        assert SECRET not in text
