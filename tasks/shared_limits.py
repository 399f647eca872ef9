"""Provider limits that hold across processes, through Prefect global concurrency limits.

For `[limits] shared = true`: every process of a run (scaled-out flow runs, workers) shares
one server-side limit per provider, `lme-bench-provider-<name>` (calls in flight) and
`lme-bench-provider-<name>-rpm` (a rate limit: one slot, decaying at rpm/60 per second, so
call starts are spaced evenly). An in-process gate in front keeps a process's own waiters from
polling the server.

A call holds a lease on a slot: acquired and released with the run's own client (two round
trips), renewed from the same event loop only if the call outlives most of the lease. If the
process dies, the server frees the slot when the lease expires. A process sends one of these
requests at a time: concurrent writes lock a SQLite-backed server up (16 at once took 4.7x as
long). Prefect's own `concurrency()` adds a renewal thread and a new client per call
(`PrefectConcurrencyLimiter`, kept for comparison; figures in docs/changelog.md).

The flow calls `install_shared_limits(settings)` once before its tasks start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from uuid import UUID

import httpx
from prefect.client.orchestration import PrefectClient, SyncPrefectClient, get_client
from prefect.client.schemas.actions import (
    GlobalConcurrencyLimitCreate,
    GlobalConcurrencyLimitUpdate,
)
from prefect.concurrency.asyncio import ConcurrencySlotAcquisitionError, concurrency, rate_limit
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

from lme_bench.common.limits import InProcessLimiter, ThreadSafeSlots, set_shared_limiter_factory
from lme_bench.config.run_section import ProviderLimit
from lme_bench.config.settings import Settings

PREFIX = "lme-bench-provider-"
LEASE_S = 300.0  # the server accepts 60 s to 1 day
log = logging.getLogger(__name__)
_one_request = ThreadSafeSlots(1)  # this process's limit requests to the server, one at a time


@asynccontextmanager
async def _request_turn() -> AsyncIterator[None]:
    await _one_request.acquire()
    try:
        yield
    finally:
        _one_request.release()


def limit_names(provider: str) -> tuple[str, str]:
    """(concurrency limit, rate limit) names of a provider."""
    return f"{PREFIX}{provider}", f"{PREFIX}{provider}-rpm"


async def _acquire(client: PrefectClient, name: str) -> UUID:
    """A lease on one slot of `name`, waiting as long as the server's Retry-After says."""
    while True:
        try:
            async with _request_turn():
                response = await client.increment_concurrency_slots_with_lease(
                    names=[name], slots=1, mode="concurrency", lease_duration=LEASE_S
                )
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code != 423:  # 423: no slot free now
                raise
            await asyncio.sleep(float(exc.response.headers.get("Retry-After", 1.0)))
            continue
        data = response.json()
        if not data.get("limits"):
            raise ConcurrencySlotAcquisitionError(
                f"no global concurrency limit {name!r}: call install_shared_limits first"
            )
        return UUID(data["lease_id"])


async def _renew(client: PrefectClient, lease_id: UUID) -> None:
    while True:
        await asyncio.sleep(LEASE_S * 0.75)
        try:
            async with _request_turn():
                await client.renew_concurrency_lease(lease_id=lease_id, lease_duration=LEASE_S)
        except Exception as exc:  # the call goes on; the slot may be freed early
            log.warning("could not renew concurrency lease %s: %s", lease_id, exc)


@asynccontextmanager
async def leased_slot(name: str) -> AsyncIterator[None]:
    """Hold one slot of the global concurrency limit `name` (inside a task run, the run's
    client is reused)."""
    async with get_client() as client:
        lease_id = await _acquire(client, name)
        renewing = asyncio.create_task(_renew(client, lease_id))
        try:
            yield
        finally:
            renewing.cancel()
            try:
                async with _request_turn():
                    await client.release_concurrency_slots_with_lease(lease_id=lease_id)
            except Exception as exc:  # never fails the call: the lease expires on its own
                log.warning("could not release concurrency lease %s: %s", lease_id, exc)


class PrefectLimiter:
    """One provider's limits as Prefect global concurrency limits (which must exist)."""

    def __init__(self, provider: str, limit: ProviderLimit) -> None:
        self.provider = provider
        self.limit = limit
        names = limit_names(provider)
        self.concurrency_name = names[0] if limit.concurrency else None
        self.rate_name = names[1] if limit.rpm else None
        self._local = InProcessLimiter(limit.concurrency, None) if limit.concurrency else None

    def _hold(self, name: str) -> AbstractAsyncContextManager[None]:
        return leased_slot(name)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if self._local is not None:
                await stack.enter_async_context(self._local.slot())
            if self.concurrency_name is not None:
                await stack.enter_async_context(self._hold(self.concurrency_name))
            if self.rate_name is not None:
                await rate_limit(self.rate_name, strict=True)
            yield

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider!r}, {self.limit!r})"


class PrefectConcurrencyLimiter(PrefectLimiter):
    """The same through Prefect's `concurrency()` context manager (slower: see above)."""

    def _hold(self, name: str) -> AbstractAsyncContextManager[None]:
        # A lost lease never kills a model call.
        return concurrency(name, occupy=1, strict=True, raise_on_lease_renewal_failure=False)


def _wanted(settings: Settings) -> list[tuple[str, int, float]]:
    """(name, limit, slot decay per second) of every server-side limit the settings need."""
    wanted = []
    for provider, limit in sorted(settings.limits.providers.items()):
        concurrency_name, rate_name = limit_names(provider)
        if limit.concurrency:
            wanted.append((concurrency_name, limit.concurrency, 0.0))
        if limit.rpm:
            wanted.append((rate_name, 1, limit.rpm / 60.0))
    return wanted


def _upsert(client: SyncPrefectClient, name: str, limit: int, decay: float) -> None:
    """Create the limit, or set its size and decay and make it active (another process may
    create it at the same moment: then update theirs)."""
    for _ in range(2):
        try:
            found = client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            try:
                client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(
                        name=name, limit=limit, slot_decay_per_second=decay
                    )
                )
                return
            except ObjectAlreadyExists:
                continue
        if (found.limit, found.slot_decay_per_second, found.active) != (limit, decay, True):
            update = GlobalConcurrencyLimitUpdate(
                limit=limit, slot_decay_per_second=decay, active=True
            )
            client.update_global_concurrency_limit(name, update)
        return


def install_shared_limits(
    settings: Settings, limiter: type[PrefectLimiter] = PrefectLimiter
) -> list[str]:
    """Create or update the server-side limits of `settings.limits.providers` and make
    `provider_limiter` hand out `limiter`s that use them in this process; the limits' names.
    Synchronous (call it from the flow); async code awaits `ainstall_shared_limits`."""
    wanted = _wanted(settings)
    with get_client(sync_client=True) as client:
        for name, size, decay in wanted:
            _upsert(client, name, size, decay)
    set_shared_limiter_factory(limiter)
    return [name for name, _, _ in wanted]


async def ainstall_shared_limits(
    settings: Settings, limiter: type[PrefectLimiter] = PrefectLimiter
) -> list[str]:
    """`install_shared_limits` without blocking the event loop (e.g. inside an async task)."""
    return await asyncio.to_thread(install_shared_limits, settings, limiter)


def uninstall_shared_limits() -> None:
    """Back to in-process limits in this process (the server-side limits are kept)."""
    set_shared_limiter_factory(None)
