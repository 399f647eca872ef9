"""Model clients over kept-alive connections, used from many event loops in one process, as a
run's tasks use them: each loop sends through its own connections, closed as the loop ends."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from langchain_core.messages import HumanMessage

from lme_bench.common.loop_end import at_loop_end, end_of_loop
from lme_bench.config.settings import ProviderSettings, load_settings
from lme_bench.judge.official_request import OfficialJudgeRequest
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.factory import ModelSpec, build_chat_model
from lme_bench.providers.http_clients import LoopLocalTransport, model_http_client
from lme_bench.providers.retry import RetryPolicy
from tests.providers.fake_openai_server import FakeOpenAI, serve


def _chat_model(url: str):  # type: ignore[no-untyped-def]
    spec = ModelSpec("qa", "local", "tiny", "openai-compatible", ProviderSettings(base_url=url))
    return build_chat_model(spec, load_settings(None).models, 64)


def _transport(url: str) -> LoopLocalTransport:
    transport = model_http_client(url)._transport
    assert isinstance(transport, LoopLocalTransport)
    return transport


def _assert_closed(url: str, fake: FakeOpenAI, loops: list[asyncio.AbstractEventLoop]) -> None:
    """Every loop's pool was closed as its loop ended: the transport holds none of them, and
    the server saw every connection hung up."""
    transport = _transport(url)
    assert loops and not any(transport.has_pool(loop) for loop in loops)
    assert fake.server is not None
    for _ in range(200):  # the server's handlers notice the hang-ups (at most 10 s)
        if not fake.server.open_connections:
            break
        time.sleep(0.05)
    assert fake.server.open_connections == 0


def test_a_model_built_once_answers_on_loop_after_loop_over_kept_alive_connections() -> None:
    with serve([{"content": "Blue."}]) as (url, fake):
        model = _chat_model(url)

        loops: list[asyncio.AbstractEventLoop] = []

        async def twice() -> list[str]:
            loops.append(asyncio.get_running_loop())
            first = await model.ainvoke([HumanMessage("Colour?")])
            second = await model.ainvoke([HumanMessage("Colour?")])
            return [str(first.content), str(second.content)]

        replies = [asyncio.run(twice()) for _ in range(4)]  # four tasks, four loops
        assert replies == [["Blue.", "Blue."]] * 4
        # each loop kept its connection for its second call, and closed it as it ended
        assert len(fake.requests) == 8 and fake.connections == 4
        _assert_closed(url, fake, loops)


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    with serve([{"content": "Blue."}], idle_timeout_s=0.2) as (url, fake):
        model = CountedModel(_chat_model(url), RetryPolicy(attempts=1))

        async def with_a_pause() -> None:
            await model.ainvoke([HumanMessage("Colour?")])
            assert fake.server is not None
            for _ in range(600):  # until the server closed the idle one (at most 30 s)
                if not fake.server.open_connections:
                    break
                await asyncio.sleep(0.05)
            await model.ainvoke([HumanMessage("Colour?")])

        asyncio.run(with_a_pause())
        # the second call went out on a new connection, not failing on the closed one
        assert model.account.calls == 2 and model.account.retries.retries == 0
        assert fake.connections == 2


def test_the_official_judge_request_and_chat_models_share_a_loops_connection() -> None:
    with serve([{"content": "yes"}]) as (url, fake):

        async def judge_and_chat() -> None:
            judge = OfficialJudgeRequest("gpt-4o-2024-08-06", "k", url, timeout_s=10)
            await judge.ainvoke([HumanMessage("Is it right?")])
            await _chat_model(url).ainvoke([HumanMessage("Colour?")])

        asyncio.run(judge_and_chat())
        asyncio.run(judge_and_chat())
        assert len(fake.requests) == 4 and fake.connections == 2


def test_loops_in_threads_at_once_each_use_their_own_pool() -> None:
    with serve([{"content": "Blue."}]) as (url, fake):
        model = _chat_model(url)
        errors: list[BaseException] = []
        loops: list[asyncio.AbstractEventLoop] = []

        async def ask() -> None:
            loops.append(asyncio.get_running_loop())
            await model.ainvoke([HumanMessage("Colour?")])

        def task() -> None:
            try:
                for _ in range(3):
                    asyncio.run(ask())
            except BaseException as error:  # reported below, with the thread's error
                errors.append(error)

        threads = [threading.Thread(target=task) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and len(fake.requests) == 12
        _assert_closed(url, fake, loops)


def test_closers_run_on_their_own_loop_last_registered_first() -> None:
    ran: list[tuple[str, bool]] = []

    async def register() -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        for name in ("first", "second"):

            async def close(name: str = name) -> None:
                ran.append((name, asyncio.get_running_loop() is loop))

            at_loop_end(close)
        return loop

    asyncio.run(register())
    assert ran == [("second", True), ("first", True)]

    async def ended_by_hand() -> None:
        await register()
        await end_of_loop()
        assert len(ran) == 4

    asyncio.run(ended_by_hand())
    assert len(ran) == 4  # closers run once


def test_at_loop_end_needs_a_running_loop() -> None:
    async def close() -> None:
        pass

    with pytest.raises(RuntimeError):
        at_loop_end(close)
