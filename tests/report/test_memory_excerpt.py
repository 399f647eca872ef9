"""report.html shows, per question, what its memory held after ingestion, read back from the
memory system (the context document's start, the newest entries; a backend that cannot list
its contents says so), and a memory agent's context document that never changed after the
first session is flagged in memory health."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.backends.capabilities import entries_of
from lme_bench.backends.configured import open_system
from lme_bench.config.settings import Settings, load_settings
from lme_bench.ingest.question import IngestOutcome
from lme_bench.run.finish import RunReport, RunResults, write_run
from lme_bench.run.steps import evaluate_question, ingest_question, plan_run, prepare_questions

ROOT = Path(__file__).resolve().parents[2]
AGENTIC = ROOT / "configs" / "agentic-fake.toml"
SENT_TO_USER = "The complete updated context document has been sent to the user."  # its context


def _settings(tmp_path: Path, config: Path | None = AGENTIC, **overrides: Any) -> Settings:
    return load_settings(config, **{"run.results_dir": str(tmp_path), "run.id": "x", **overrides})


def _run(settings: Settings, limit: int) -> tuple[RunReport, list[IngestOutcome]]:
    plan = plan_run(settings)
    prepared, refs = prepare_questions(plan, limit=limit)
    results = RunResults()
    results.outcomes = [asyncio.run(ingest_question(r, settings, plan.run_id)) for r in refs]
    pairs = zip(refs, results.outcomes, strict=True)
    results.retrieval = [
        row for r, o in pairs for row in asyncio.run(evaluate_question(r, o, settings))
    ]
    return write_run(plan, settings, prepared, refs, results, datetime.now(UTC)), results.outcomes


def _cards(page: str) -> dict[str, str]:
    """Question id -> its card's html."""
    cards = page.split('<section class="q')[1:]
    return {card.split("<h3>", 1)[1].split(" <small>", 1)[0]: card for card in cards}


def test_a_context_left_as_a_sentence_about_it_is_flagged_and_shown(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path, **{"ingest.mode": "context-only", "models.agent": "fake:sent-to-user"}
    )
    report, _ = _run(settings, limit=2)
    rows = pq.read_table(report.run_dir / "ingest.parquet").to_pylist()
    assert len(rows) > 2 and {r["ingest_health"] for r in rows} == {"context-unchanged"}
    ids = sorted({r["question_id"] for r in rows})
    unchanged = report.summary["memory_health"]["context_unchanged"]
    assert (unchanged["count"], unchanged["question_ids"]) == (2, ids)
    assert report.summary["memory_health"]["empty"] == 0  # it holds something: not empty
    banner = report.markdown.split("\n\n")[1]
    assert banner.startswith("**Context never updated**: context document never changed after")
    assert all(q in banner for q in ids)
    page = (report.run_dir / "report.html").read_text()
    assert 'id="context-unchanged"' in page
    for question_id, card in _cards(page).items():
        assert "context document never changed after the first session" in card, question_id
        assert f'<pre class="memory">{escape(SENT_TO_USER)}</pre>' in card


def _held(settings: Settings, memory_id: str) -> tuple[Any, ...]:
    """What the memory holds, read from the store itself: context, newest 3 entries, count."""

    async def read() -> tuple[Any, ...]:
        system = open_system(settings)
        entries = entries_of(system)
        assert entries is not None
        try:
            return (
                await entries.get_context(memory_id),
                await entries.recent_entries(memory_id, 3),
                await entries.count_entries(memory_id),
            )
        finally:
            await system.close()

    return asyncio.run(read())


def test_each_card_shows_the_context_and_newest_entries_read_from_the_memory(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path)  # agentic: entries and a context document
    report, outcomes = _run(settings, limit=2)
    assert report.summary["memory_health"]["context_unchanged"]["count"] == 0
    excerpts = json.loads((report.run_dir / "memory_excerpts.json").read_text())
    cards = _cards((report.run_dir / "report.html").read_text())
    assert set(cards) == set(excerpts) and len(cards) == 2
    for outcome in outcomes:
        card, excerpt = cards[outcome.question_id], excerpts[outcome.question_id]
        context, newest, held = _held(settings, outcome.memory_id)
        assert context and newest and held > 3
        assert excerpt["available"] and excerpt["entry_count"] == held
        assert context.startswith(excerpt["context"].removesuffix(" …"))
        assert f"{held} entries; the newest 3:" in card
        assert all(f"<li>{escape(e.summary)}</li>" in card for e in newest)
        assert f'<pre class="memory">{escape(excerpt["context"])}</pre>' in card


def test_a_backend_that_cannot_list_its_contents_says_so(tmp_path: Path) -> None:
    backend = "tests/backends/recording_backend.py:RecordingNotes"
    settings = _settings(tmp_path, None, **{"memory.backend": backend, "memory.params": {}})
    report, _ = _run(settings, limit=1)
    (card,) = _cards((report.run_dir / "report.html").read_text()).values()
    assert '<dt>memory holds</dt><dd><span class="none">not available from this backend' in card


def test_an_mcp_memory_server_is_read_back_with_its_own_tools(tmp_path: Path) -> None:
    from tests.wire.capture import http_sent, tool_calls
    from tests.wire.servers import RecordingHttpServer

    record = tmp_path / "sent.log"
    server = RecordingHttpServer(tmp_path / "server")
    server.start(record)
    try:
        params = server.settings().model_dump(mode="json")
        settings = _settings(tmp_path, None, **{"memory.backend": "mcp", "memory.params": params})
        plan = plan_run(settings)
        _, refs = prepare_questions(plan, limit=1)
        outcome = asyncio.run(ingest_question(refs[0], settings, plan.run_id))
    finally:
        server.stop()
    excerpt = outcome.memory_excerpt
    assert excerpt is not None and excerpt.available
    assert excerpt.entry_count == outcome.entries == refs[0].n_turns
    assert len(excerpt.entries) == 3 and all(excerpt.entries)
    _, messages = http_sent(record)
    names = [name for name, _ in tool_calls(messages)]
    assert "list_entries" in names and "get_context" in names
