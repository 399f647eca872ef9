"""What every conformance test shares: per-run titles, one event loop, one runner per
implementation.

The MCP clients are opened once per test session (one persistent session each, as the harness
holds them), so every scenario runs on one long-lived event loop in a background thread.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from tests.conformance.clients import ToolClient

RUN_ID = uuid.uuid4().hex[:8]
SCENARIO_TIMEOUT_S = 120.0
_titles = itertools.count(1)

Scenario = Callable[[ToolClient], Awaitable[Any]]


def unique_title(prefix: str = "conf") -> str:
    """A fresh vault title (lowercase letters, digits, hyphens; ≤ 50 chars)."""
    return f"{prefix}-{RUN_ID}-{next(_titles)}"


class LoopThread:
    """An asyncio loop running in a daemon thread; `run` waits for a coroutine's result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(SCENARIO_TIMEOUT_S)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class Implementation:
    """Runs scenarios against one implementation: a shared client, or a fresh one per run."""

    def __init__(
        self,
        name: str,
        runner: LoopThread,
        *,
        shared: ToolClient | None = None,
        connect: Callable[[], ToolClient] | None = None,
    ) -> None:
        self.name = name
        self._runner = runner
        self._shared = shared
        self._connect = connect

    def run(self, scenario: Scenario) -> Any:
        async def main() -> Any:
            if self._shared is not None:
                return await scenario(self._shared)
            assert self._connect is not None
            client = self._connect()
            try:
                return await scenario(client)
            finally:
                await client.close()

        return self._runner.run(main())
