"""Provider limits shared through Prefect global concurrency limits, under the test harness:
tasks on a thread pool (each on its own event loop) stay within the server-side limit."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from lme_bench_tasks.shared_limits import (
    PrefectConcurrencyLimiter,
    PrefectLimiter,
    install_shared_limits,
    uninstall_shared_limits,
)
from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.testing.utilities import prefect_test_harness

from lme_bench.common.limits import Limiter, provider_limiter
from lme_bench.config.run_section import LimitSettings, ProviderLimit
from lme_bench.config.settings import ModelsSettings, ProviderSettings, Settings
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.factory import model_for
from lme_bench.providers.fake_stats import FAKE_CALLS

pytestmark = pytest.mark.slow
LATENCY = 0.1


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield
    uninstall_shared_limits()


def _settings(concurrency: int | None, rpm: float | None = None) -> Settings:
    limit = ProviderLimit(concurrency=concurrency, rpm=rpm)
    return Settings(
        providers={"slow": ProviderSettings(kind="fake", latency_s=LATENCY)},
        limits=LimitSettings(shared=True, providers={"slow": limit}),
        models=ModelsSettings(qa="slow:echo"),
    )


@task(cache_policy=NO_CACHE)
async def call_model(i: int, settings: Settings, own_process: bool) -> float:
    """One model call; with `own_process` the task gets its own limiter object, as if it ran in
    a process of its own (so only the server-side limit can hold the tasks back)."""
    model, policy, spec = model_for("qa", settings)
    limiter: Limiter | None = provider_limiter(settings, spec.provider)
    assert isinstance(limiter, PrefectLimiter)
    if own_process:
        limiter = type(limiter)(spec.provider, settings.limits.providers[spec.provider])
    reply = await CountedModel(model, policy, limiter=limiter).ainvoke([HumanMessage(f"q{i}")])
    assert reply.content == f"q{i}"
    return time.monotonic() - LATENCY  # when the call started


@flow(task_runner=ThreadPoolTaskRunner(max_workers=6))  # type: ignore[arg-type]
def six_calls(settings: Settings, own_process: bool) -> list[float]:
    futures: Any = call_model.map(
        range(6), settings=unmapped(settings), own_process=unmapped(own_process)
    )
    return [f.result() for f in futures]


def test_install_creates_and_updates_the_server_side_limits(harness: None) -> None:
    names = install_shared_limits(_settings(2, rpm=600))
    assert names == ["lme-bench-provider-slow", "lme-bench-provider-slow-rpm"]
    install_shared_limits(_settings(3, rpm=600))  # a second install updates, never duplicates
    with get_client(sync_client=True) as client:
        gate = client.read_global_concurrency_limit_by_name("lme-bench-provider-slow")
        rate = client.read_global_concurrency_limit_by_name("lme-bench-provider-slow-rpm")
    assert (gate.limit, gate.slot_decay_per_second, gate.active) == (3, 0.0, True)
    assert (rate.limit, rate.slot_decay_per_second) == (1, 10.0)


@pytest.mark.parametrize(
    ("limiter", "own_process"),
    [(PrefectLimiter, False), (PrefectLimiter, True), (PrefectConcurrencyLimiter, True)],
)
def test_tasks_on_a_thread_pool_share_the_global_limit(
    harness: None, limiter: type[PrefectLimiter], own_process: bool
) -> None:
    settings = _settings(2)
    install_shared_limits(settings, limiter)
    FAKE_CALLS.reset()
    six_calls(settings, own_process)
    assert FAKE_CALLS.total == 6
    assert FAKE_CALLS.max_in_flight <= 2
    assert FAKE_CALLS.in_flight == 0


def test_the_shared_rate_limit_spaces_call_starts(harness: None) -> None:
    settings = _settings(None, rpm=600)  # one start every 0.1 s
    install_shared_limits(settings)
    starts = sorted(six_calls(settings, own_process=True))
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 60 / 600 - 0.03
