"""Provider limits from the config: declared fake providers with latency, bad values refused,
and models built from settings staying within their provider's limit."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from lme_bench.common.limits import InProcessLimiter, provider_limiter
from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.judge.panel import judge_panel
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.factory import model_for
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import note_taker
from lme_bench.providers.fake_stats import FAKE_CALLS

SLOW = """
[providers.slow]
kind = "fake"
latency_s = {latency}

[limits.providers.slow]
concurrency = 2

[models]
qa = "slow:echo"
agent = "slow:note-taker"
judge = "slow:yes"
"""


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return load_settings(path)


def test_declared_fake_provider_gives_the_policy_model_with_its_latency(tmp_path: Path) -> None:
    settings = _load(tmp_path, SLOW.format(latency=0.2))
    model, _, spec = model_for("agent", settings)
    assert (spec.provider, spec.kind, spec.model) == ("slow", "fake", "note-taker")
    assert isinstance(model, ScriptedChatModel)
    assert model.latency_s == 0.2 and model.script == [note_taker]
    plain, _, _ = model_for("agent", load_settings(None, **{"models.agent": "fake:note-taker"}))
    assert isinstance(plain, ScriptedChatModel) and plain.latency_s == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[providers.local]\nbase_url = "http://x/v1"\nlatency_s = 0.2\n',
            "providers.local: Value error, latency_s simulates a slow model and is only for "
            "kind = 'fake', not kind = 'openai-compatible'",
        ),
        ('[providers.o]\nkind = "openai"\nlatency_s = 1\n', "not kind = 'openai'"),
        ('[providers.f]\nkind = "fake"\nlatency_s = -0.1\n', "providers.f.latency_s"),
        ("[limits.providers.openai]\nconcurrency = 0\n", "limits.providers.openai.concurrency"),
        ("[limits.providers.openai]\nrpm = -5\n", "limits.providers.openai.rpm"),
        ("[limits.providers.openai]\nburst = 5\n", "limits.providers.openai.burst"),
        ("[limits]\njudge = 0\n", "limits.judge"),
    ],
)
def test_bad_provider_and_limit_values_are_refused(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert expected in str(caught.value)


def _six_threads(call: Callable[[], Coroutine[Any, Any, None]]) -> None:
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            asyncio.run(call())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors


def test_model_from_settings_keeps_its_provider_within_the_limit(tmp_path: Path) -> None:
    settings = _load(tmp_path, SLOW.format(latency=0.05))
    model, policy, spec = model_for("qa", settings)
    limiter = provider_limiter(settings, spec.provider)
    assert isinstance(limiter, InProcessLimiter) and limiter.concurrency == 2

    async def call() -> None:
        counted = CountedModel(model, policy, limiter=limiter)
        assert (await counted.ainvoke([HumanMessage("hello")])).content == "hello"

    FAKE_CALLS.reset()
    _six_threads(call)
    assert FAKE_CALLS.total == 6
    assert FAKE_CALLS.max_in_flight == 2
    assert FAKE_CALLS.in_flight == 0


def test_unlimited_provider_runs_all_six_at_once(tmp_path: Path) -> None:
    settings = _load(tmp_path, SLOW.format(latency=0.05).replace("concurrency = 2", ""))
    model, policy, spec = model_for("qa", settings)
    assert provider_limiter(settings, spec.provider) is None

    async def call() -> None:
        await CountedModel(model, policy).ainvoke([HumanMessage("hello")])

    FAKE_CALLS.reset()
    _six_threads(call)
    assert FAKE_CALLS.max_in_flight == 6  # the limit, not the fake, held the other test to 2


def test_judge_stage_calls_stay_within_the_limit(tmp_path: Path) -> None:
    settings = _load(tmp_path, SLOW.format(latency=0.05))
    (judge,) = judge_panel(settings).llm
    assert judge.limiter is provider_limiter(settings, "slow")

    async def call() -> None:
        row = await judge.judge(
            question_id="q1",
            question_type="single-session-user",
            is_abstention=False,
            question="What colour is the car?",
            answer="red",
            hypothesis="It is red.",
            repeat=0,
        )
        assert row.label is True

    FAKE_CALLS.reset()
    _six_threads(call)
    assert (FAKE_CALLS.total, FAKE_CALLS.max_in_flight) == (6, 2)
