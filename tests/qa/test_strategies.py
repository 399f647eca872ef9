from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.backends.protocol import Capability, Hit
from lme_bench.backends.recall import MemorySearch, Recall
from lme_bench.config.settings import QaSettings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view
from lme_bench.entries.capability import VaultEntries
from lme_bench.entries.models import ContextHit
from lme_bench.ingest.as_they_are import TurnEntries
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.loop import feed_sessions
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.qa.reader import load_qa_prompts
from lme_bench.qa.strategies import Answerer, fuse
from tests.factories import make_question


def _hit(entry_id: str, text: str = "t", score: float = 1.0) -> Hit:
    return Hit(text, score, "2024-01-01T00:00:00.000000Z", id=entry_id)


def test_fuse_dedupes_by_entry_and_ranks_by_reciprocal_rank() -> None:
    a = Recall([_hit("x"), _hit("y"), _hit("z")], [ContextHit("c1", "t1", 0.2)], "L1")
    b = Recall([_hit("y"), _hit("w")], [ContextHit("c1", "t1", 0.9)], "L2")
    merged = fuse([a, b])
    # y: 1/62 + 1/61 beats x: 1/61; z: 1/63 < w: 1/62.
    assert [h.id for h in merged.entries] == ["y", "x", "w", "z"]
    assert [(c.context, c.score) for c in merged.contexts] == [("c1", 0.9)]
    assert merged.latest_context == "L2"


def test_fuse_leaves_unscored_hits_out_of_the_fusion_and_puts_them_last() -> None:
    # Full rankings: each search's non-matches (score 0) follow its matches, oldest first, so
    # the same old entries fill every list; by rank alone f1 (1/63 + 1/62) would beat m1 (1/61).
    a = Recall([_hit("m1"), _hit("m2"), _hit("f1", score=0.0), _hit("f2", score=0.0)])
    b = Recall([_hit("m3"), _hit("f1", score=0.0), _hit("f2", score=0.0), _hit("m2")])
    merged = fuse([a, b])
    # m1, m3: 1/61 (ties keep first appearance); m2: 1/62 + 1/64; then f1, f2 as first seen.
    assert [h.id for h in merged.entries] == ["m2", "m1", "m3", "f1", "f2"]
    # A server that gives no scores at all: rank alone, as before.
    c = Recall([_hit("x", score=0.0), _hit("y", score=0.0)])
    d = Recall([_hit("y", score=0.0)])
    assert [h.id for h in fuse([c, d]).entries] == ["y", "x"]


def _memory(tmp_path: Path) -> tuple[EmbeddedEntryStore, str, Instance]:
    instance = Instance.model_validate(
        make_question(question="What does my golden retriever chew?")
    )
    view, _ = make_view(instance)
    backend = EmbeddedEntryStore(tmp_path / "m.sqlite")

    async def build() -> str:
        entries_in_vault = VaultEntries(backend, "v")
        memory = await entries_in_vault.open_memory("q__r")
        checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
        writer = TurnEntries(entries_in_vault, checkpoints, fresh=True)
        await feed_sessions("q", view, memory, checkpoints, writer)
        checkpoints.close()
        return memory

    return backend, asyncio.run(build()), instance


class _EntrySystem:
    """The store as a system with an entry surface, as the embedded backend presents it."""

    name = "embedded"
    capabilities = frozenset({Capability.ENTRIES})

    def __init__(self, backend: EmbeddedEntryStore) -> None:
        self.entry_memory = backend

    async def wait_until_ready(self, memory_id: str) -> None:
        await self.entry_memory.await_consistency(memory_id)


def _answer(tmp_path: Path, script: list[object], **qa: object):  # type: ignore[no-untyped-def]
    backend, memory_id, instance = _memory(tmp_path)
    fake = ScriptedChatModel(script=script)
    search = MemorySearch(_EntrySystem(backend), instance.question_date)  # type: ignore[arg-type]
    answerer = Answerer(search, CountedModel(fake), load_qa_prompts(), QaSettings(**qa))
    view, _ = make_view(instance)
    answer = asyncio.run(answerer.answer(view, memory_id))
    return answer, fake, answerer.model.account, instance


def test_single_is_one_call_with_dated_entries_and_no_gold(tmp_path: Path) -> None:
    answer, fake, account, instance = _answer(tmp_path, ["A golden retriever."])
    assert answer.hypothesis == "A golden retriever." and answer.searches == 1
    assert account.calls == 1 and account.input_tokens > 0
    prompt = str(fake.calls[0].messages[0].content)
    assert "Current Date: 2023/05/30 (Tue) 23:40" in prompt
    assert "[2023/05/01 (Mon) 09:15] user: My golden retriever Max chews everything." in prompt
    assert "do not know" in prompt
    for gold in (
        "has_answer",
        "answer_4be1b6b4",
        "sharegpt_Ab3dE9x_0",
        instance.answer_session_ids[0],
    ):
        assert gold not in prompt


def test_entries_are_shown_oldest_first(tmp_path: Path) -> None:
    answer, fake, _, _ = _answer(tmp_path, ["ok"], top_ke=10)
    prompt = str(fake.calls[0].messages[0].content)
    dates = [line[1:23] for line in prompt.splitlines() if line.startswith("[2023/")]
    assert dates == sorted(dates) and len(answer.shown) == len(dates) > 1


@pytest.mark.parametrize(("reply", "searches"), [("SUFFICIENT", 1), ("REFINE: puppy chewing", 2)])
def test_two_pass(tmp_path: Path, reply: str, searches: int) -> None:
    answer, _fake, account, _ = _answer(tmp_path, [reply, "final"], strategy="two-pass")
    assert answer.searches == searches and account.calls == 2
    assert answer.hypothesis == "final"
    if searches == 2:
        assert answer.queries[1] == "puppy chewing"


def test_multi_query_runs_proposed_queries_and_merges(tmp_path: Path) -> None:
    script = ["1. puppy chewing\n- sourdough proof\n\nMax the dog", "final"]
    answer, fake, account, _ = _answer(tmp_path, script, strategy="multi-query", max_queries=3)
    assert answer.queries[1:] == ["puppy chewing", "sourdough proof", "Max the dog"]
    assert answer.searches == 4 and account.calls == 2
    assert "2023/05/30" in str(fake.calls[0].messages[0].content)  # time-aware query writing
    assert "sourdough" in str(fake.calls[1].messages[0].content)


def test_rerank_adds_one_call_and_moves_picked_entries_first(tmp_path: Path) -> None:
    answer, fake, account, _ = _answer(tmp_path, ["0", "final"], rerank=True)
    assert account.calls == 2 and answer.hypothesis == "final"
    assert "Numbered memory entries" in str(fake.calls[0].messages[0].content)
