"""The `mcp` backend against our server (HTTP and stdio) vs the embedded backend, through the
harness's EntryMemory protocol, and the walking-skeleton pipeline run on both.

Rank depth: `search_memories` returns at most 25 entries, so the MCP pipeline run (default
`retrieval.top_k` = 1000) ranks 25 entries. The embedded run is given `top_k` = 25 as well, and
then every retrieval metric (@1 … @50, turn and session level) must be equal. The 25 is set with
`model_copy`, bypassing the ≥ 50 floor that config validation keeps for real runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.backends.entry_system import open_entry_store
from lme_bench.backends.mycelian_mcp import MAX_TOP_KE, McpEntryStore
from lme_bench.config.settings import Settings, load_settings
from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.entries.models import NewEntry
from lme_bench.run.steps import evaluate_question, ingest_question, plan_run, prepare_questions
from tests.conformance.harness import RUN_ID, unique_title
from tests.conformance.servers import HttpServer, stdio_settings

NOTES = [
    ("I repaired the bicycle chain on my commuter bike today.", "s1", "user"),
    ("Chains need cleaning and oil every few hundred kilometres.", "s1", "assistant"),
    ("My sister is visiting from Montreal next week.", "s2", "user"),
    ("The sourdough starter needs feeding twice a day in summer.", "s3", "user"),
    ("I bought a new bicycle helmet with a rear light.", "s4", "user"),
    ("We planted tomatoes and basil on the balcony of the flat.", "s5", "user"),
    ("Basil likes sun; water the tomatoes in the morning.", "s5", "assistant"),
]
QUERIES = ["bicycle", "when is my sister visiting", "tomatoes basil balcony", "starter", "zebra"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    running = HttpServer(tmp_path_factory.mktemp("parity-server"))
    yield running
    running.stop()


def _backends(tmp_path: Path, server: HttpServer) -> dict[str, Callable[[], EntryMemory]]:
    return {
        "embedded": lambda: EmbeddedEntryStore(tmp_path / "embedded.sqlite"),
        "mcp-http": lambda: McpEntryStore(server.settings()),
        "mcp-stdio": lambda: McpEntryStore(stdio_settings(tmp_path / "stdio.sqlite")),
    }


def _each(
    tmp_path: Path, server: HttpServer, scenario: Callable[[EntryMemory], Awaitable[Any]]
) -> dict[str, Any]:
    async def run(backend: EntryMemory) -> Any:
        try:
            return await scenario(backend)
        finally:
            await backend.close()

    return {name: asyncio.run(run(make())) for name, make in _backends(tmp_path, server).items()}


def test_get_or_create_behaves_the_same(tmp_path: Path, server: HttpServer) -> None:
    title = unique_title("parity")

    async def scenario(backend: EntryMemory) -> tuple[bool, ...]:
        vault = await backend.get_or_create_vault(title)
        memory = await backend.get_or_create_memory(vault, f"q1__{RUN_ID}")
        other = await backend.get_or_create_memory(vault, f"q2__{RUN_ID}")
        return (
            vault == await backend.get_or_create_vault(title),
            memory == await backend.get_or_create_memory(vault, f"q1__{RUN_ID}"),
            memory != other,
            vault != await backend.get_or_create_vault(unique_title("parity")),
        )

    assert set(_each(tmp_path, server, scenario).values()) == {(True, True, True, True)}


def test_same_entries_give_the_same_hits(tmp_path: Path, server: HttpServer) -> None:
    title = unique_title("parity")
    entries = [
        NewEntry(text, text[:80], {"session_key": key, "turn_index": str(n), "role": role})
        for n, (text, key, role) in enumerate(NOTES)
    ]

    async def scenario(backend: EntryMemory) -> list[list[tuple[Any, ...]]]:
        vault = await backend.get_or_create_vault(title)
        memory = await backend.get_or_create_memory(vault, f"hits__{RUN_ID}")
        await backend.add_entries(vault, memory, entries)
        await backend.await_consistency(memory)
        assert await backend.count_entries(memory) == len(entries)
        results = []
        for query in QUERIES:
            found = await backend.search(memory, query, top_ke=10, top_kc=1)
            assert all(hit.tags.get("session_key") for hit in found.entries)
            results.append(
                [(h.raw_entry, h.summary, h.tags, round(h.score, 9)) for h in found.entries]
            )
        return results

    hits = _each(tmp_path, server, scenario)
    assert hits["embedded"][0] and hits["embedded"][0][0][0] == NOTES[0][0]
    # Every entry is ranked, "zebra" (no match) included: matches first, then the rest.
    assert [len(found) for found in hits["embedded"]] == [len(NOTES)] * len(QUERIES)
    assert hits["mcp-http"] == hits["embedded"]
    assert hits["mcp-stdio"] == hits["embedded"]


def test_a_full_ranking_over_mcp_is_cut_at_25(tmp_path: Path, server: HttpServer) -> None:
    title = unique_title("parity")
    texts = [f"note {n}: " + ("a bicycle ride" if n % 3 == 0 else "a quiet day") for n in range(30)]
    entries = [
        NewEntry(t, t, {"session_key": f"s{n}", "turn_index": "0"}) for n, t in enumerate(texts)
    ]

    async def scenario(backend: EntryMemory) -> list[str]:
        vault = await backend.get_or_create_vault(title)
        memory = await backend.get_or_create_memory(vault, f"deep__{RUN_ID}")
        await backend.add_entries(vault, memory, entries)
        await backend.await_consistency(memory)
        found = await backend.search(memory, "bicycle", top_ke=1000, top_kc=1)
        return [hit.summary for hit in found.entries]

    ranked = _each(tmp_path, server, scenario)
    matches = [t for t in texts if "bicycle" in t]
    assert ranked["embedded"][: len(matches)] == sorted(
        matches, key=lambda t: int(t.split()[1].rstrip(":"))
    )  # equal BM25 scores: older first
    assert len(ranked["embedded"]) == 30
    assert ranked["mcp-http"] == ranked["mcp-stdio"] == ranked["embedded"][:MAX_TOP_KE]


def _pipeline(settings: Settings, n_questions: int) -> tuple[list[Any], list[Any]]:
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=n_questions)
    outcomes = [asyncio.run(ingest_question(ref, settings, plan.run_id)) for ref in refs]
    assert [o.entries for o in outcomes] == [ref.n_turns for ref in refs]
    rows = []
    for ref, outcome in zip(refs, outcomes, strict=True):
        rows += asyncio.run(evaluate_question(ref, outcome, settings))
    return outcomes, rows


def test_pipeline_over_mcp_scores_like_the_embedded_backend(
    tmp_path: Path, server: HttpServer
) -> None:
    vault = unique_title("pipeline")
    common = {"run.id": f"parity-{RUN_ID}"}
    over_mcp = load_settings(
        None,
        **common,
        **{"run.results_dir": str(tmp_path / "mcp"), "memory.backend": "mcp"},
        **{"memory.params": {"transport": "streamable_http", "url": server.url, "vault": vault}},
    )
    assert isinstance(open_entry_store(over_mcp), McpEntryStore)
    embedded = load_settings(
        None,
        **common,
        **{"run.results_dir": str(tmp_path / "embedded"), "memory.params": {"vault": vault}},
    )
    embedded = embedded.model_copy(
        update={"retrieval": embedded.retrieval.model_copy(update={"top_k": MAX_TOP_KE})}
    )

    mcp_outcomes, mcp_rows = _pipeline(over_mcp, 4)
    emb_outcomes, emb_rows = _pipeline(embedded, 4)

    assert [o.entries for o in mcp_outcomes] == [o.entries for o in emb_outcomes]
    assert len(mcp_rows) == len(emb_rows) == 8 and all(r.status == "ok" for r in mcp_rows)
    for mine, theirs in zip(mcp_rows, emb_rows, strict=True):
        assert (mine.question_id, mine.granularity) == (theirs.question_id, theirs.granularity)
        assert mine.ranked_ids == theirs.ranked_ids
        assert mine.metrics == theirs.metrics and mine.n_evidence == theirs.n_evidence
    scored = [r for r in mcp_rows if not r.is_abstention]
    assert scored and any(r.metrics["recall_any@10"] > 0 for r in scored)
