"""Memory health: a question whose ingestion stored nothing is flagged in its ingest rows, its
failure attribution, summary.json, summary.md, report.html and the line the flow ends with; a
memory that holds entries or a context is not, whatever the system."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.backends.protocol import Hit, Session
from lme_bench.backends.registry import backend_data_dir
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.views import QuestionView, SessionView, TurnView, make_view
from lme_bench.ingest.health import probe_queries
from lme_bench.run.finish import RunReport, RunResults, headline
from lme_bench.run.steps import (
    ingest_question,
    plan_run,
    prepare_questions,
)
from tests.backends.recording_backend import RecordingNotes
from tests.every_stage import run_every_stage

ROOT = Path(__file__).resolve().parents[2]
AGENTIC = ROOT / "configs" / "agentic-fake.toml"
QA = {"models.qa": "fake:quote-memory", "models.judge": "fake:match-judge"}


def _settings(tmp_path: Path, config: Path | None = AGENTIC, **overrides: Any) -> Settings:
    return load_settings(config, **{"run.results_dir": str(tmp_path), "run.id": "h", **overrides})


def _run(settings: Settings, limit: int) -> tuple[RunReport, RunResults]:
    report, results, _ = run_every_stage(settings, limit)
    return report, results


def test_an_agent_that_never_writes_is_flagged_everywhere(tmp_path: Path) -> None:
    settings = _settings(tmp_path, **{"models.agent": "fake:prose-only", **QA})
    report, results = _run(settings, limit=3)
    ids = sorted(o.question_id for o in results.outcomes)
    assert all(o.ingest_health == "empty" and o.entries == 0 for o in results.outcomes)

    rows = pq.read_table(report.run_dir / "ingest.parquet").to_pylist()
    assert rows and {r["ingest_health"] for r in rows} == {"empty"}
    health = report.summary["memory_health"]
    assert (health["checked"], health["empty"], health["question_ids"]) == (3, 3, ids)
    assert json.loads((report.run_dir / "summary.json").read_text())["memory_health"] == health

    markdown = (report.run_dir / "summary.md").read_text()
    banner = markdown.split("\n\n")[1]  # right under the title
    assert banner.startswith("**Empty memory**: the ingestion of 3 of 3 questions stored nothing")
    assert all(q in banner for q in ids) and "no entry and no context document" in banner
    page = (report.run_dir / "report.html").read_text()
    assert 'id="memory-empty"' in page and all(q in page for q in ids)
    assert page.count("memory empty after ingestion: it stored nothing") == 3  # each card
    line = headline(report.summary)
    assert f"memory empty after ingestion for 3 of 3 questions ({', '.join(ids)})" in line
    manifest = json.loads((report.run_dir / "manifest.json").read_text())
    assert manifest["ingestion"]["empty_memories"] == ids

    # Wrong answers from an empty memory are put down to it, not to retrieval.
    scores = pq.read_table(report.run_dir / "scores.parquet").to_pylist()
    causes = {s["attribution"] for s in scores if s["judge"] == "fake:match-judge"}
    assert "memory-empty" in causes and "evidence-not-retrieved" not in causes
    assert causes <= {"memory-empty", "correct"}


def test_unusable_tool_calls_are_totalled_in_the_summary(tmp_path: Path) -> None:
    settings = _settings(tmp_path, **{"models.agent": "fake:clumsy-tools"})
    report, _ = _run(settings, limit=2)
    rows = pq.read_table(report.run_dir / "ingest.parquet").to_pylist()
    per_session = [dict(r["unusable_tool_calls"]) for r in rows]
    turns = [r["turns"] for r in rows]
    assert per_session == [
        {"invalid-arguments": n + 1, "unknown-tool": n, "unparsable-arguments": n} for n in turns
    ]
    totals = report.summary["ingestion"]["unusable_tool_calls"]
    assert totals == {
        "invalid-arguments": sum(turns) + len(rows),
        "unknown-tool": sum(turns),
        "unparsable-arguments": sum(turns),
    }
    assert f"Unusable tool calls: {sum(totals.values())} (invalid-arguments" in report.markdown
    assert report.summary["memory_health"]["empty"] == 2


def test_memories_that_hold_entries_or_a_context_are_healthy(tmp_path: Path) -> None:
    raw, _ = _run(_settings(tmp_path / "raw", ROOT / "configs" / "full-fake.toml"), limit=3)
    context, context_run = _run(
        _settings(tmp_path / "context", **{"ingest.mode": "context-only"}), limit=2
    )
    assert {o.ingest_health for o in context_run.outcomes} == {"ok"}
    assert all(o.entries == 0 for o in context_run.outcomes)  # a context document only
    for report in (raw, context):
        assert report.summary["memory_health"]["empty"] == 0
        assert "Empty memory" not in report.markdown
        assert "memory empty" not in headline(report.summary)
        rows = pq.read_table(report.run_dir / "ingest.parquet").to_pylist()
        assert {r["ingest_health"] for r in rows} == {"ok"}


class ForgetfulNotes(RecordingNotes):
    """Takes every session and keeps none of it (as an extracting system that found nothing)."""

    name = "forgetful-notes"

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        self._record("ingest_session", memory_id=memory_id)


class BrokenSearchNotes(RecordingNotes):
    """Keeps every session; its search fails (a bug in the backend)."""

    name = "broken-search-notes"

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        raise RuntimeError("search is broken")


def test_a_failing_probe_search_leaves_the_ingestion_standing_and_unchecked(
    tmp_path: Path,
) -> None:
    backend = "tests/ingest/test_memory_health.py:BrokenSearchNotes"
    settings = _settings(tmp_path, None, **{"memory.backend": backend, "memory.params": {}})
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=1)
    outcome = asyncio.run(ingest_question(refs[0], settings, plan.run_id))
    assert outcome.ingest_health == "unchecked"
    assert outcome.sessions and all(r.status == "ok" for r in outcome.sessions)


def _searches(settings: Settings) -> list[dict[str, Any]]:
    folder = backend_data_dir(settings)
    calls = [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines()]
    return [c for c in calls if c["call"] == "search"]


def test_a_system_without_entries_is_searched_with_its_own_text(tmp_path: Path) -> None:
    for name, expected in (("RecordingNotes", "ok"), ("ForgetfulNotes", "empty")):
        where = tmp_path / name
        backend = (
            "tests/backends/recording_backend.py:RecordingNotes"
            if name == "RecordingNotes"
            else "tests/ingest/test_memory_health.py:ForgetfulNotes"
        )
        settings = _settings(where, None, **{"memory.backend": backend, "memory.params": {}})
        plan = plan_run(settings)
        _, refs = prepare_questions(plan, limit=1)
        outcome = asyncio.run(ingest_question(refs[0], settings, plan.run_id))
        assert outcome.ingest_health == expected, name
        assert {r.ingest_health for r in outcome.sessions} == {expected}
        view, _ = make_view(refs[0].load())
        probes = probe_queries(view)
        # A memory that holds something answers the first probe; an empty one is asked each.
        wanted = probes[:1] if expected == "ok" else probes
        assert [s["query"] for s in _searches(settings)] == wanted and len(probes) > 2


def test_probes_are_messages_of_the_first_middle_and_last_sessions_then_their_words() -> None:
    def session(key: str, *turns: tuple[str, str]) -> SessionView:
        return SessionView(key, "2023/05/01 (Mon) 09:15", tuple(TurnView(*t) for t in turns))

    view = QuestionView(
        "q?",
        "2023/06/01 (Thu) 10:00",
        (
            session("s000", ("assistant", "Hello there"), ("user", "I adopted a beagle")),
            session("s001", ("user", "  ")),
            session("s002", ("user", "Sourdough needs patience")),
            session("s003", ("assistant", "Only the assistant spoke")),
        ),
    )
    assert probe_queries(view) == [
        "I adopted a beagle",
        "Sourdough needs patience",
        "Only the assistant spoke",
        "adopted",
        "Sourdough",
        "assistant",
    ]
    assert probe_queries(QuestionView("q?", "2023/06/01 (Thu) 10:00", ())) == []


@pytest.mark.slow
def test_the_flows_last_line_names_the_empty_memories(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", str(AGENTIC), "--limit", "2",
         "--run-id", "prose", "--results-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_LOGGING_LEVEL": "INFO",
             "LME_MODELS__AGENT": "fake:prose-only"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((tmp_path / "prose" / "manifest.json").read_text())
    ids = manifest["ingestion"]["empty_memories"]
    assert ids == sorted(manifest["question_ids"])
    logs = done.stdout + done.stderr
    last = next(line for line in reversed(logs.splitlines()) if "questions done" in line)
    assert f"memory empty after ingestion for 2 of 2 questions ({', '.join(ids)})" in last
