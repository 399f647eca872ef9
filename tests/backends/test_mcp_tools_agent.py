"""Agentic ingestion with a memory server's own tools: the memory agent (fake:kg-note-taker)
writes @modelcontextprotocol/server-memory through the tools the mcp-tools backend hands it
(langchain-mcp-adapters), started over stdio behind a recorder of every byte sent to it; the
store holds an entity per session named by its key and date, nothing a gold label could be read
from goes over the wire, sessions are checkpointed, and `lme-bench run` runs the shipped config
(configs/mcp-knowledge-graph-agent.toml)."""

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
from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.agent.tool_prompts import tool_prompts
from lme_bench.backends.builtin_params import memory_path
from lme_bench.backends.configured import open_system
from lme_bench.backends.mcp_tools_fake_agent import KG_NOTE_TAKER, kg_note_taker
from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.views import make_view
from lme_bench.ingest.agent_tools import ToolAgentWriter
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.fingerprint import ingest_fingerprint
from lme_bench.ingest.loop import feed_sessions
from lme_bench.ingest.question import check_run_models
from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.fake import ScriptedChatModel, ToolPolicy
from lme_bench.providers.retry import RetryPolicy
from lme_bench.run.estimate import estimate_run
from lme_bench.run.steps import (
    evaluate_question,
    ingest_question,
    locate_memories,
    plan_run,
    prepare_questions,
)
from tests.backends.conftest import REPO
from tests.backends.test_mcp_tools import data_dir, graph, recorded, shipped_params
from tests.factories import make_question
from tests.wire.capture import stdio_sent, tool_calls

CONFIG = REPO / "configs" / "mcp-knowledge-graph-agent.toml"
QUESTION_ID = "aa11bb22_abs"  # an abstention id: "_abs" must not reach the server either
ANSWER = "a golden retriever named Max, adopted in spring"  # in no turn
QUESTION = make_question(QUESTION_ID, answer=ANSWER)
# Sessions in date order, as the opaque keys name them: the puppy session is the older one.
SESSIONS = {
    "s000 on 2023/05/01 (Mon) 09:15": [
        "Any tips for a first week with a puppy?",
        "My golden retriever Max chews everything.",
    ],
    "s001 on 2023/05/20 (Sat) 10:00": ["How long should sourdough proof in the fridge?"],
}


def _dataset(tmp_path: Path) -> Path:
    dataset = tmp_path / "questions.json"
    dataset.write_text(json.dumps([QUESTION]))
    return dataset


def _settings(tmp_path: Path, script: Path, **overrides: Any) -> Settings:
    return load_settings(
        None,
        **{
            "dataset.path": str(_dataset(tmp_path)),
            "run.results_dir": str(tmp_path / "results"),
            "run.id": "kg-agent",
            "memory.backend": "mcp-tools",
            "memory.params": recorded(script, shipped_params(CONFIG)),
            "ingest.mode": "agentic",
            "models.agent": "fake:kg-note-taker",
            "models.judge": "none",
            **overrides,
        },
    )


def _store(settings: Settings, memory_id: str) -> dict[str, list[str]]:
    path = data_dir(memory_path(settings).parent) / f"{memory_id}.jsonl"
    entities = [item for item in graph(path) if item.get("type") == "entity"]
    assert {e["entityType"] for e in entities} <= {"session"}
    return {e["name"]: e["observations"] for e in entities}


async def _ingest(settings: Settings) -> tuple[str, list[SessionRecord]]:
    plan = plan_run(settings)
    _, refs = prepare_questions(plan)
    located = await locate_memories([QUESTION_ID], settings, plan.run_id)
    outcome = await ingest_question(refs[0], settings, plan.run_id, located[QUESTION_ID])
    rows = await evaluate_question(refs[0], outcome, settings)
    assert rows and all(row.status == "ok" for row in rows)
    return outcome.memory_id, outcome.sessions


@pytest.mark.slow  # starts node servers
def test_the_agent_writes_with_the_servers_tools_and_no_gold_label(
    server_script: Path, tmp_path: Path
) -> None:
    settings = _settings(tmp_path, server_script)
    memory_id, records = asyncio.run(_ingest(settings))

    assert _store(settings, memory_id) == SESSIONS
    assert [(r.session_key, r.mode, r.status, r.error) for r in records] == [
        ("s000", "agentic", "ok", None),
        ("s001", "agentic", "ok", None),
    ]
    # One call per message and one at session end; the agent's tokens are counted.
    assert [r.llm_calls for r in records] == [5, 3]
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in records)
    assert records[0].tool_calls == {"create_entities": 1, "add_observations": 1}
    assert records[0].memory_calls == {
        "create_entities": 1,
        "add_observations": 1,
        "wait_until_ready": 1,
    }
    assert records[1].tool_calls == {"create_entities": 1}
    estimate = estimate_run([q.instance for q in iter_questions(settings.dataset.path)], settings)
    assert estimate.stages[0].calls == sum(r.llm_calls for r in records)

    # Hits map back to their session by the entity's name.
    async def search() -> list[Any]:
        system = open_system(settings)
        try:
            return await system.search(memory_id, "golden retriever", question_date="", k=10)
        finally:
            await system.close()

    hits = asyncio.run(search())
    assert [(h.session_key, h.date, h.turn_index) for h in hits] == [
        ("s000", "2023/05/01 (Mon) 09:15", None)
    ]

    # A second ingestion resumes every session from its checkpoint: no model, no tool call.
    _, again = asyncio.run(_ingest(settings))
    assert all(r.resumed for r in again)
    sent, messages = stdio_sent(data_dir(memory_path(settings).parent) / f"wire-{memory_id}.log")
    calls = tool_calls(messages)
    writes = [name for name, _ in calls if name in {"create_entities", "add_observations"}]
    assert writes == ["create_entities", "add_observations", "create_entities"]
    assert {name for name, _ in calls} <= {
        "create_entities", "add_observations", "search_nodes", "read_graph"
    }  # fmt: skip
    instance = next(iter_questions(settings.dataset.path)).instance
    forbidden = {
        QUESTION_ID,
        "_abs",
        ANSWER,
        "has_answer",
        "answer_session_ids",
        *instance.haystack_session_ids,
    }
    wire = sent + json.dumps(messages, ensure_ascii=False)
    assert sorted(label for label in forbidden if label in wire) == []
    assert memory_id not in sent  # the memory is the store's file name, never sent


@pytest.mark.slow  # starts node servers
def test_a_session_cut_off_midway_is_redone_and_done_ones_are_skipped(
    server_script: Path, tmp_path: Path
) -> None:
    settings = _settings(tmp_path, server_script)
    view, _ = make_view(next(iter_questions(settings.dataset.path)).instance)
    cut = {"done": False}
    models: list[ScriptedChatModel] = []

    def cut_off_once(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        third = "session s000 of 2023/05/01 (Mon) 09:15, message 3 of 4"
        if third in str(messages[-1].content) and not cut["done"]:
            cut["done"] = True
            raise RuntimeError("the agent's process was stopped")
        return kg_note_taker(messages, tools)

    async def ingest() -> list[SessionRecord]:
        system = open_system(settings)
        checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
        try:
            memory_id = await system.open_memory("lme-" + "c" * 40)
            model = ScriptedChatModel(script=[ToolPolicy(cut_off_once)])
            models.append(model)
            writer = ToolAgentWriter(system, model, settings.ingest, checkpoints, RetryPolicy())
            return await feed_sessions(QUESTION_ID, view, memory_id, checkpoints, writer)
        finally:
            checkpoints.close()
            await system.close()

    with pytest.raises(RuntimeError, match="stopped"):
        asyncio.run(ingest())
    first = "s000 on 2023/05/01 (Mon) 09:15"
    assert _store(settings, "lme-" + "c" * 40) == {first: SESSIONS[first][:1]}
    records = asyncio.run(ingest())
    assert [(r.session_key, r.resumed, r.llm_calls) for r in records] == [
        ("s000", False, 5),
        ("s001", False, 3),
    ]
    # The redone session's entity and its first observation were already there: this server
    # ignores an entity it holds and an observation the entity has (not every server does).
    assert _store(settings, "lme-" + "c" * 40) == SESSIONS
    again = asyncio.run(ingest())
    assert all(r.resumed for r in again)
    assert not models[-1].calls  # done sessions need no model

    # What the model was shown: our tools prompt, the server's tools, the session's key, date
    # and messages, and nothing a gold label could be read from.
    calls = models[1].calls
    assert {tuple(sorted(c.tools)) for c in calls} == {
        ("add_observations", "create_entities", "create_relations", "open_nodes", "search_nodes")
    }
    assert all(str(c.messages[0].content) == tool_prompts().system for c in calls)
    first = str(calls[0].messages[-1].content)
    assert "[observe] session s000 of 2023/05/01 (Mon) 09:15, message 1 of 4, user:" in first
    assert "Your tool calls so far in this session: none" in first
    second = str(calls[1].messages[-1].content)
    assert "Your tool calls so far in this session: create_entities ok" in second
    assert "Recent messages:\nuser: Any tips for a first week with a puppy?" in second
    shown = json.dumps([str(m.content) for c in calls for m in c.messages], ensure_ascii=False)
    instance = next(iter_questions(settings.dataset.path)).instance
    for label in (QUESTION_ID, "_abs", ANSWER, "has_answer", *instance.haystack_session_ids):
        assert label not in shown


@pytest.mark.slow  # starts node servers
def test_the_tools_prompts_are_part_of_the_ingestion_fingerprint(
    server_script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.ingest import fingerprint

    settings = _settings(tmp_path, server_script)
    before = ingest_fingerprint(settings)
    raw = ingest_fingerprint(settings.model_copy(update={"ingest": settings.ingest.model_copy(
        update={"mode": "raw"})}))  # fmt: skip
    real = fingerprint._folder_digest

    def changed(package: str, *parts: str) -> str:
        found = real(package, *parts)
        return found + "-edited" if parts == ("prompts", "tools", "v1") else found

    monkeypatch.setattr(fingerprint, "_folder_digest", changed)
    assert ingest_fingerprint(settings) != before
    assert ingest_fingerprint(settings.model_copy(update={"ingest": settings.ingest.model_copy(
        update={"mode": "raw"})})) == raw  # fmt: skip


@pytest.mark.slow  # starts node servers
def test_lme_bench_run_with_the_shipped_agent_config(server_script: Path, tmp_path: Path) -> None:
    text = CONFIG.read_text().replace('command = "npx"', 'command = "node"')
    text = text.replace(
        'args = ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]',
        f"args = [{json.dumps(str(server_script))}]",
    )
    assert str(server_script) in text
    config = tmp_path / "kg-agent.toml"
    config.write_text(text)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "lme_bench_flows.command", "run", str(config), "--limit", "2",
         "--results-dir", str(results), "--run-id", "kg-agent"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pq.read_table(results / "kg-agent" / "retrieval.parquet").to_pylist()
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    ingested = pq.read_table(results / "kg-agent" / "ingest.parquet").to_pylist()
    assert ingested and all(r["mode"] == "agentic" and r["status"] == "ok" for r in ingested)
    assert all(r["llm_calls"] == r["turns"] + 1 and r["input_tokens"] > 0 for r in ingested)
    assert sum(dict(r["memory_calls"]).get("create_entities", 0) for r in ingested) > 0


def _checked(**overrides: Any) -> None:
    check_run_models(load_settings(None, **{"models.agent": "fake:kg-note-taker", **overrides}))


def test_which_systems_take_agentic_ingestion_with_their_own_tools(tmp_path: Path) -> None:
    params = shipped_params(CONFIG)
    _checked(**{"memory.backend": "mcp-tools", "memory.params": params, "ingest.mode": "agentic"})
    with pytest.raises(ConfigError, match="needs a memory with entries and a context document;"):
        _checked(
            **{
                "memory.backend": "mcp-tools",
                "memory.params": params,
                "ingest.mode": "context-only",
            }
        )
    with pytest.raises(ConfigError, match="or a memory system that gives an agent tools of its"):
        _checked(
            **{
                "memory.backend": "docs/example_backend.py:SessionNotes",
                "memory.params": {},
                "ingest.mode": "agentic",
            }
        )

    # A configuration whose agent would reach every memory on a shared server gives no tools.
    pattern = r"^(?P<memory>\S+) (?P<session_key>\S+) on (?P<date>.+)$"
    shared = {
        **params,
        "memory_scoping": "prefix",
        "env": {"MEMORY_FILE_PATH": "{data_dir}/shared.jsonl"},
        "ingest_per": "session",
        "ingest_args": {"entities": [{"name": "{memory} {session_key} on {date}"}]},
        "hit_path": {**params["hit_path"], "name_pattern": pattern},
    }
    settings = load_settings(
        None,
        **{
            "memory.backend": "mcp-tools",
            "memory.params": shared,
            "run.results_dir": str(tmp_path),
            "ingest.mode": "agentic",
            "models.agent": "fake:kg-note-taker",
        },
    )

    async def ingest() -> None:
        system = open_system(settings)
        checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
        try:
            model = ScriptedChatModel(script=[KG_NOTE_TAKER])
            writer = ToolAgentWriter(system, model, settings.ingest, checkpoints, RetryPolicy())
            view, _ = make_view(next(iter_questions(_dataset(tmp_path))).instance)
            await feed_sessions(QUESTION_ID, view, "lme-" + "d" * 40, checkpoints, writer)
        finally:
            checkpoints.close()
            await system.close()

    with pytest.raises(ConfigError, match="gives an agent no tools of its own"):
        asyncio.run(ingest())


@pytest.mark.slow  # starts a node server
def test_a_failed_tool_call_is_shown_to_the_agent_and_recorded(
    server_script: Path, tmp_path: Path
) -> None:
    """The server refuses add_observations on an entity it does not hold: the session goes on,
    the next prompt shows the error, the session's record names it."""
    settings = _settings(tmp_path, server_script)
    view, _ = make_view(next(iter_questions(settings.dataset.path)).instance)

    def observe_only(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        if "[observe]" not in str(messages[-1].content):
            return AIMessage(content="")
        contents = {"observations": [{"entityName": "nobody", "contents": ["x"]}]}
        call = {"name": "add_observations", "args": contents, "id": "c1", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])

    model = ScriptedChatModel(script=[ToolPolicy(observe_only)])

    async def ingest() -> list[SessionRecord]:
        system = open_system(settings)
        checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
        try:
            writer = ToolAgentWriter(system, model, settings.ingest, checkpoints, RetryPolicy())
            return await feed_sessions(QUESTION_ID, view, "lme-" + "e" * 40, checkpoints, writer)
        finally:
            checkpoints.close()
            await system.close()

    records = asyncio.run(ingest())
    assert [r.status for r in records] == ["ok", "ok"]
    assert records[0].tool_calls == {"add_observations": 4}
    assert records[0].error is not None
    assert records[0].error.startswith("add_observations: ") and "nobody" in records[0].error
    second = str(model.calls[1].messages[-1].content)
    assert "Your tool calls so far in this session: add_observations error" in second
    assert "Results of your last tool calls:\n- add_observations: error: " in second
    assert _store(settings, "lme-" + "e" * 40) == {}
