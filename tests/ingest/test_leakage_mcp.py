"""Nothing a gold label could be read from goes over the MCP wire: every byte our client sends
a memory server (stdio and streamable HTTP) during ingestion (raw, and agentic with the fake
note-taker), retrieval and answering holds no question id, no `_abs`, no gold answer, no
evidence flag and no original session id."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import McpSettings, Settings, load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.models import Instance
from lme_bench.run.steps import (
    answer_question,
    bundled_sample,
    evaluate_question,
    ingest_question,
    locate_memories,
    plan_run,
    prepare_questions,
    qa_panel,
)
from tests.wire.capture import http_sent, stdio_sent, tool_calls
from tests.wire.servers import RecordingHttpServer, recording_stdio_settings

QUESTIONS = ["9244d1d0_abs", "898f2907", "gpt4_cf742c7f"]  # one unanswerable, two evidence
TAGS = {"session_key", "turn_index", "role", "session_date"}
AGENT_TAGS = {"raw": set(), "agentic": {"source"}}  # the agent marks its entries "source: agent"


def _settings(tmp_path: Path, mode: str, mcp: McpSettings) -> Settings:
    overrides: dict[str, Any] = {
        "run.results_dir": str(tmp_path / "results"),
        "run.id": "wire",
        "memory.backend": "mcp",
        "memory.params": mcp.model_dump(mode="json"),
        "ingest.mode": mode,
        "models.qa": "fake:quote-memory",
        "models.judge": "none",
    }
    if mode == "agentic":
        overrides["models.agent"] = "fake:note-taker"
    return load_settings(None, **overrides)


async def _ingest_search_answer(settings: Settings) -> None:
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, QUESTIONS)
    located = await locate_memories([r.question_id for r in refs], settings, plan.run_id)
    for ref in refs:
        outcome = await ingest_question(ref, settings, plan.run_id, located[ref.question_id])
        rows = await evaluate_question(ref, outcome, settings)
        assert rows and all(row.status == "ok" for row in rows)
        hypothesis = await answer_question(ref, outcome.memory_id, qa_panel(settings))
        assert hypothesis.status == "ok" and hypothesis.entries_shown > 0


def _forbidden(instances: dict[str, Instance]) -> set[str]:
    """Every sample question id and session id, the label names, `_abs`, and the gold answers
    of the questions run that neither their haystack nor their question text contains."""
    found = {"_abs", "has_answer", "answer_session_ids"}
    for instance in instances.values():
        found |= {instance.question_id, *instance.haystack_session_ids}
        found |= set(instance.answer_session_ids)
    for question_id in QUESTIONS:
        instance = instances[question_id]
        said = "\n".join(t.content for s in instance.haystack_sessions for t in s)
        if instance.answer not in said and instance.answer not in instance.question:
            found.add(instance.answer)
    return found


# Both transports carry the same tool calls: stdio (a server process per connection, ~2 s
# each) runs the agentic case only, which makes every call the raw case makes and more.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("transport", "mode"),
    [("streamable_http", "raw"), ("streamable_http", "agentic"), ("stdio", "agentic")],
)
def test_nothing_sent_to_the_memory_server_names_a_gold_label(
    tmp_path: Path, transport: str, mode: str
) -> None:
    record = tmp_path / "sent.log"
    server = None
    if transport == "stdio":
        mcp = recording_stdio_settings(tmp_path / "memory.sqlite", record)
    else:
        server = RecordingHttpServer(tmp_path / "server")
        server.start(record)
        mcp = server.settings()
    try:
        asyncio.run(_ingest_search_answer(_settings(tmp_path, mode, mcp)))
    finally:
        if server is not None:
            server.stop()
    text, messages = (stdio_sent if transport == "stdio" else http_sent)(record)
    calls = tool_calls(messages)
    names = {name for name, _ in calls}
    assert {"create_memory_in_vault", "add_entry", "search_memories"} <= names, names

    titles = [args["title"] for name, args in calls if name == "create_memory_in_vault"]
    assert len(titles) == len(QUESTIONS)
    assert all(re.fullmatch(r"lme-[0-9a-f]{40}", title) for title in titles), titles
    added = [args for name, args in calls if name == "add_entry"]
    assert added
    for args in added:
        assert set(args["tags"]) == TAGS | AGENT_TAGS[mode], args["tags"]
        assert re.fullmatch(r"s\d{3}", args["tags"]["session_key"])

    instances = {q.instance.question_id: q.instance for q in iter_questions(bundled_sample())}
    sent = text + "\n" + json.dumps(messages, ensure_ascii=False)  # escapes undone
    leaked = sorted(label for label in _forbidden(instances) if label in sent)
    assert leaked == []
