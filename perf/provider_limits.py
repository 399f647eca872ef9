"""Provider call limits: the in-process limiter against Prefect global concurrency limits.

N fake model calls (each `--latency` seconds) made by `--threads` Prefect tasks at once on a
thread pool task runner (each task on its own thread and event loop, as in a run), through one
provider limited to `--concurrency` calls in flight. Wall time, from the first call's start to
the last call's end, is compared with the ideal: calls x latency / concurrency. The overhead per
call is timed apart: a free slot taken and given back, one after another in one task.
Runs on a temporary Prefect test server unless PREFECT_API_URL names one.

    python perf/provider_limits.py [--calls 64] [--latency 0.2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from typing import Any

os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="lme-bench-limits-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")

import support  # noqa: F401  # this clone's lme_bench on the import path
from langchain_core.messages import HumanMessage
from lme_bench_tasks.shared_limits import (
    PrefectConcurrencyLimiter,
    PrefectLimiter,
    install_shared_limits,
    uninstall_shared_limits,
)
from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from lme_bench.common.limits import Limiter, provider_limiter
from lme_bench.config.run_section import LimitSettings, ProviderLimit
from lme_bench.config.settings import ModelsSettings, ProviderSettings, Settings
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.factory import model_for
from lme_bench.providers.fake_stats import FAKE_CALLS

PROVIDER = "bench"


def settings_for(latency: float, concurrency: int, shared: bool) -> Settings:
    return Settings(
        providers={PROVIDER: ProviderSettings(kind="fake", latency_s=latency)},
        limits=LimitSettings(
            shared=shared, providers={PROVIDER: ProviderLimit(concurrency=concurrency)}
        ),
        models=ModelsSettings(qa=f"{PROVIDER}:echo"),
    )


@task(cache_policy=NO_CACHE)
async def caller(calls: int, settings: Settings, limited: bool) -> tuple[float, float]:
    """`calls` calls one after another; when the first started and the last ended."""
    model, policy, spec = model_for("qa", settings)
    limiter: Limiter | None = provider_limiter(settings, spec.provider) if limited else None
    counted = CountedModel(model, policy, limiter=limiter)
    started = time.perf_counter()
    for i in range(calls):
        await counted.ainvoke([HumanMessage(f"call {i}")])
    return started, time.perf_counter()


@task(cache_policy=NO_CACHE)
async def empty_slots(times: int, settings: Settings) -> float:
    """Median seconds to take and give back a free slot."""
    limiter = provider_limiter(settings, PROVIDER)
    assert limiter is not None
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        async with limiter.slot():
            pass
        spent.append(time.perf_counter() - started)
    return statistics.median(spent)


@flow
def fan_out(settings: Settings, limited: bool, calls: int, threads: int) -> float:
    """Seconds from the first call's start to the last call's end, `threads` tasks at once."""
    per_task = [calls // threads + (i < calls % threads) for i in range(threads)]
    futures: Any = caller.map(per_task, unmapped(settings), unmapped(limited))
    spans = [f.result() for f in futures]
    return max(end for _, end in spans) - min(start for start, _ in spans)


@flow
def per_call(settings: Settings, times: int) -> float:
    """The limiter's overhead per call: a free slot taken and given back, in one task."""
    result: float = empty_slots(times, settings)
    return result


def measure(settings: Settings, limited: bool, args: argparse.Namespace) -> tuple[float, int]:
    """(wall seconds, most calls in flight) of the fan-out, after one run to warm up."""
    runner: Any = ThreadPoolTaskRunner(max_workers=args.threads)
    fan_out.with_options(task_runner=runner)(settings, limited, args.calls, args.threads)
    FAKE_CALLS.reset()
    wall = fan_out.with_options(task_runner=runner)(settings, limited, args.calls, args.threads)
    return wall, FAKE_CALLS.max_in_flight


@contextlib.contextmanager
def prefect_server() -> Iterator[str]:
    if os.environ.get("PREFECT_API_URL"):
        yield os.environ["PREFECT_API_URL"]
        return
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield "temporary test server"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--overhead-calls", type=int, default=100)
    args = parser.parse_args()
    ideal = args.calls * args.latency / min(args.concurrency, args.threads)
    local = settings_for(args.latency, args.concurrency, shared=False)
    shared = settings_for(args.latency, args.concurrency, shared=True)
    rows = []
    with prefect_server() as where:
        rows.append(("none", *measure(local, False, args), 0.0))
        overhead = per_call(local, args.overhead_calls)
        rows.append(("in-process", *measure(local, True, args), overhead))
        for name, limiter in (
            ("prefect limit, lease (ours)", PrefectLimiter),
            ("prefect limit, concurrency()", PrefectConcurrencyLimiter),
        ):
            install_shared_limits(shared, limiter)
            try:
                overhead = per_call(shared, args.overhead_calls)
                rows.append((name, *measure(shared, True, args), overhead))
            finally:
                uninstall_shared_limits()
    print(
        f"\n{args.calls} fake calls x {args.latency * 1000:.0f} ms from {args.threads} tasks at "
        f"once, concurrency {args.concurrency}; ideal {ideal:.2f} s; Prefect: {where}\n"
    )
    print("| limiter | wall | wall / ideal | max in flight | overhead per call |")
    print("|---|---:|---:|---:|---:|")
    for name, wall, peak, extra in rows:
        print(f"| {name} | {wall:.2f} s | {wall / ideal:.2f} | {peak} | {extra * 1000:.3f} ms |")


if __name__ == "__main__":
    main()
