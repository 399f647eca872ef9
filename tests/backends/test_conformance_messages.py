"""Every check of the conformance suite fails with a message saying what it expected and what
the backend did, never a bare AssertionError (pytest does not rewrite an installed package's
asserts): run here on a backend that breaks every promise."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import ClassVar

import pytest

from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    MemorySystem,
    Session,
    Usage,
)
from lme_bench.conformance import MemorySystemConformance, build_system

_ids = itertools.count()


class Careless:
    """Forgets memories between objects, mixes memories, ignores `k`, keeps duplicates, names
    wrong sessions and turns, and deletes nothing, while declaring it all works."""

    Params: ClassVar[type[BackendParams]] = BackendParams
    name: ClassVar[str] = "careless"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE, Capability.DELETES}
    )
    stored: ClassVar[list[Session]] = []

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        pass

    async def open_memory(self, title: str) -> str:
        return f"m{next(_ids)}"

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        self.stored.append(session)

    async def wait_until_ready(self, memory_id: str) -> None:
        return None

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        texts = [" ".join(t.content for t in s.turns) for s in self.stored]
        return [
            Hit(text, 1.0, date="1999/01/01", session_key="s-0", turn_index=99) for text in texts
        ]

    async def delete_memory(self, memory_id: str) -> None:
        return None

    def usage(self) -> Usage:
        return Usage()

    async def close(self) -> None:
        return None


class CarelessChecks(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        return build_system(Careless, {}, data_dir)


CHECKS = [name for name in dir(MemorySystemConformance) if name.startswith("test_")]


@pytest.mark.parametrize("check", [c for c in CHECKS if c != "test_declares_what_it_is"])
def test_each_failed_check_says_what_was_expected_and_what_happened(
    check: str, tmp_path: Path
) -> None:
    Careless.stored = []
    with pytest.raises(pytest.fail.Exception) as failed:
        getattr(CarelessChecks(), check)(tmp_path)
    message = str(failed.value)
    assert " must " in message and len(message) > 40, message


def test_a_search_that_ignores_k_is_told_so(tmp_path: Path) -> None:
    Careless.stored = []
    with pytest.raises(pytest.fail.Exception) as failed:
        CarelessChecks().test_search_returns_at_most_k_and_k_when_it_holds_more(tmp_path)
    assert "search('kayak', k=1) must return min(k, what k=50 returns) = " in str(failed.value)
    assert "it returned 4:" in str(failed.value)
