"""Backends that fail in `search`, for the tests of how a backend's failure is retried and
reported (tests/backends/test_backend_failures.py)."""

from __future__ import annotations

from typing import ClassVar

from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    TransientMemoryError,
    Usage,
)


class _Base:
    Params: ClassVar[type[BackendParams]] = BackendParams
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    searches: ClassVar[int] = 0  # search calls over every instance

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        self.env = env

    async def open_memory(self, title: str) -> str:
        return title

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        return None

    async def wait_until_ready(self, memory_id: str) -> None:
        return None

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        type(self).searches += 1
        return []

    async def delete_memory(self, memory_id: str) -> None:
        raise NotImplementedError

    def usage(self) -> Usage:
        return Usage()

    async def close(self) -> None:
        return None


class BusyOnce(_Base):
    """The first search finds the server busy; the next ones find nothing."""

    name: ClassVar[str] = "busy-once"

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        type(self).searches += 1
        if type(self).searches == 1:
            raise TransientMemoryError("server busy")
        return []


class BusyOnceInRetrieval(_Base):
    """The first search deeper than one hit (retrieval's, not the ingestion's health probe)
    finds the server busy; the next ones find nothing."""

    name: ClassVar[str] = "busy-once-in-retrieval"
    deep_searches: ClassVar[int] = 0

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        type(self).searches += 1
        if k > 1:
            type(self).deep_searches += 1
            if type(self).deep_searches == 1:
                raise TransientMemoryError("server busy")
        return []


def always_busy() -> None:
    raise TransientMemoryError("server busy")


def _lost_index() -> None:
    raise RuntimeError("the index is gone")


class Broken(_Base):
    """Every search fails in a helper of this file."""

    name: ClassVar[str] = "broken"

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        type(self).searches += 1
        _lost_index()
        return []


class CannotStart(_Base):
    """Its constructor fails, as a client that cannot reach its server may."""

    name: ClassVar[str] = "cannot-start"

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        raise RuntimeError("no server at localhost:8000")
