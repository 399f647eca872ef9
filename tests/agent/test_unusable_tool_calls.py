"""The memory agent's tool calls the harness cannot use: counted per session by reason (a tool
not offered, arguments that are not JSON, arguments that do not fit the tool), never written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from lme_bench.agent.prompts import AgentPrompts
from lme_bench.agent.server_tools import ServerTools
from lme_bench.agent.session import SessionAgent
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import make_view
from lme_bench.providers.calls import CountedModel
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import clumsy_tools, note_taker, prose_only
from tests.agent.test_memory_agent import Setup, _question


def test_unusable_calls_are_counted_by_reason_and_nothing_is_written(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[clumsy_tools]))
    records = setup.run(_question(turns_per_session=4))
    # Per observed message: an unknown tool, add_entry cut off mid-JSON, add_entry without its
    # summary; at session end put_context without content.
    assert [r.unusable_tool_calls for r in records] == [
        {"unknown-tool": 4, "unparsable-arguments": 4, "invalid-arguments": 5}
    ] * 2
    assert all(
        r.tool_calls == {"save_memory": 4, "add_entry": 8, "put_context": 1} for r in records
    )
    assert all(r.dropped_tool_calls == 0 and r.entries_written == 0 for r in records)
    assert all(r.context_chars == 0 and "add_entry: summary: Field required" in (r.error or "")
               for r in records)  # fmt: skip
    assert setup.entries() == []
    assert setup.backend.store.latest_context(setup.memory) is None


def test_an_agent_that_only_writes_prose_asks_for_nothing(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[prose_only]))
    records = setup.run(_question())
    assert all(r.llm_calls == r.turns + 1 and r.tool_calls == {} for r in records)
    assert all(r.unusable_tool_calls == {} and r.entries_written == 0 for r in records)
    assert setup.entries() == []


def test_a_usable_agent_has_no_unusable_calls(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[note_taker]))
    records = setup.run(_question())
    assert all(r.unusable_tool_calls == {} for r in records)
    assert sum(r.entries_written for r in records) == len(setup.entries()) > 0


def test_a_tool_not_offered_in_context_only_mode_is_unknown(tmp_path: Path) -> None:
    def both(messages: list[BaseMessage]) -> AIMessage:
        calls = [
            {"name": "add_entry", "args": {"summary": "a note"}, "id": "1"},
            {"name": "put_context", "args": {"content": "Facts"}, "id": "2"},
        ]
        return AIMessage(content="", tool_calls=calls)  # type: ignore[arg-type]

    setup = Setup(tmp_path, ScriptedChatModel(script=[both]), mode="context-only")
    records = setup.run(_question())
    assert [r.unusable_tool_calls for r in records] == [{"unknown-tool": 1}] * 2
    assert all(r.context_chars == len("Facts") for r in records[:1]) and setup.entries() == []


class Note(BaseModel):
    text: str
    weight: int


def _server_tools(made: list[tuple[str, dict[str, Any]]]) -> list[StructuredTool]:
    async def note(**args: Any) -> str:
        made.append(("note", args))
        return "noted"

    async def tag(**args: Any) -> str:
        made.append(("tag", args))
        return "tagged"

    schema = {
        "type": "object",
        "properties": {"names": {"type": "array"}, "flag": {"type": "boolean"}},
        "required": ["names"],
    }
    return [
        StructuredTool(name="note", description="a pydantic schema", args_schema=Note,
                       coroutine=note),
        StructuredTool(name="tag", description="a JSON schema", args_schema=schema,
                       coroutine=tag),
    ]  # fmt: skip


def test_a_servers_own_tools_are_called_only_with_arguments_that_fit() -> None:
    replies = iter(
        [
            [("note", {"text": "a", "weight": 2}), ("note", {"text": "a"})],
            [("tag", {"names": ["x"]}), ("tag", {"flag": True}), ("tag", {"names": "x"})],
            [("forget", {}), ("tag", {"names": ["y"], "flag": 1})],
        ]
    )  # then replies whose arguments do not parse: the fourth message's and the session end's

    def scripted(messages: list[BaseMessage]) -> AIMessage:
        calls = next(replies, [])
        unparsed = [{"name": "note", "args": '{"text": ', "id": "u", "error": "bad JSON"}]
        return AIMessage(
            content="",
            tool_calls=[{"name": n, "args": a, "id": f"c{i}"} for i, (n, a) in enumerate(calls)],
            invalid_tool_calls=unparsed if not calls else [],
        )

    made: list[tuple[str, dict[str, Any]]] = []
    tools = _server_tools(made)
    view, _ = make_view(_question(turns_per_session=4))
    model = CountedModel(ScriptedChatModel(script=[scripted]).bind_tools(tools))
    settings = IngestSettings(mode="agentic", max_tool_calls_per_turn=5)
    toolset = ServerTools(tools, settings)
    agent = SessionAgent(model, AgentPrompts("system", "v"), settings, view.sessions[0], toolset)
    asyncio.run(agent.run())
    assert made == [("note", {"text": "a", "weight": 2}), ("tag", {"names": ["x"]})]
    # missing weight, missing names, names not an array, an unknown tool, flag not a boolean
    assert len(view.sessions[0].turns) == 4
    assert toolset.calls.unusable == {"invalid-arguments": 4, "unknown-tool": 1,
                                  "unparsable-arguments": 2}  # fmt: skip
    assert toolset.calls.made == {"note": 1, "tag": 1}
    assert any("weight" in problem for problem in toolset.calls.problems)
