"""One session through the memory agent writing with a memory server's own tools: the agentic
graph of session.py (one model call per observed message, one at session end, the same window
of recent messages and step cap), with the tools the memory system hands out
(`MemorySystem.agent_tools`, Capability.AGENT_TOOLS) in place of add_entry / put_context.

Calls are made as the model asks for them, within the per-turn cap; unlike our own tools they
cannot be buffered, since only the server knows what its tools do. A tool's error goes back to
the model with the next message, as its results do; a lost server raises and fails the session.
A call naming no tool the agent has, or whose arguments did not parse or do not fit the tool's
schema (agent/arguments.py), is not made: it is counted by reason, and the model is told.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

from lme_bench.agent.arguments import argument_problem
from lme_bench.agent.prompts import AgentPrompts
from lme_bench.agent.session import SessionState, next_window, run_graph, start_state
from lme_bench.agent.tool_prompts import tool_observe_text, tool_session_end_text
from lme_bench.agent.tools import INVALID_ARGUMENTS, UNKNOWN_TOOL, UNPARSABLE_ARGUMENTS
from lme_bench.common.stop_signal import check_stopping
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import SessionView
from lme_bench.providers.calls import CountedModel

PROBLEM_CHARS = 200  # of a failed call's message kept in the session's record


@dataclass
class ToolCalls:
    """What the model asked for in one session and what reached the memory."""

    asked: Counter[str] = field(default_factory=Counter)
    made: Counter[str] = field(default_factory=Counter)
    dropped: int = 0  # calls past the per-turn cap
    unusable: Counter[str] = field(default_factory=Counter)  # not made, by reason
    problems: list[str] = field(default_factory=list)
    history: list[tuple[str, str]] = field(default_factory=list)  # (tool, "ok" | "error")
    last_results: list[tuple[str, str]] = field(default_factory=list)  # (tool, result text)


@dataclass
class ToolSessionRun:
    calls: ToolCalls
    status: str = "ok"  # ok | step-cap
    error: str | None = None


def result_text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        str(block.get("text", "")) if isinstance(block, dict) else str(block) for block in content
    )


class ToolSessionAgent:
    """A fresh agent for one session, writing through `tools` (bound to `model` already)."""

    def __init__(
        self,
        model: CountedModel,
        prompts: AgentPrompts,
        settings: IngestSettings,
        session: SessionView,
        tools: Sequence[BaseTool],
    ) -> None:
        self.model = model
        self.system = SystemMessage(prompts.system)
        self.settings = settings
        self.session = session
        self.tools = {tool.name: tool for tool in tools}
        self.calls = ToolCalls()

    def _unusable(
        self, results: list[tuple[str, str]], name: str, reason: str, problem: str
    ) -> None:
        self.calls.unusable[reason] += 1
        self.calls.problems.append(f"{name}: {problem}")
        self.calls.history.append((name, "error"))
        results.append((name, f"error: {problem}"))

    async def _step(self, text: str) -> None:
        reply = await self.model.ainvoke([self.system, HumanMessage(text)])
        results: list[tuple[str, str]] = []
        for unparsed in reply.invalid_tool_calls:
            name = unparsed.get("name") or ""
            self.calls.asked[name] += 1
            self._unusable(results, name, UNPARSABLE_ARGUMENTS, "the arguments are not JSON")
        for number, call in enumerate(reply.tool_calls):
            name = call["name"]
            self.calls.asked[name] += 1
            if number >= self.settings.max_tool_calls_per_turn:
                self.calls.dropped += 1
                continue
            tool = self.tools.get(name)
            if tool is None:
                self._unusable(results, name, UNKNOWN_TOOL, f"no tool named {name!r}")
                continue
            problem = argument_problem(tool, call.get("args"))
            if problem is not None:
                self._unusable(results, name, INVALID_ARGUMENTS, problem)
                continue
            call_id = call.get("id") or f"call_{sum(self.calls.asked.values())}"
            message = await tool.ainvoke({**call, "id": call_id, "type": "tool_call"})
            self.calls.made[name] += 1
            text = result_text(message) if isinstance(message, ToolMessage) else str(message)
            failed = isinstance(message, ToolMessage) and message.status == "error"
            if failed:
                self.calls.problems.append(f"{name}: {' '.join(text.split())[:PROBLEM_CHARS]}")
            self.calls.history.append((name, "error" if failed else "ok"))
            results.append((name, f"error: {text}" if failed else text))
        self.calls.last_results = results

    async def observe(self, state: SessionState) -> dict[str, Any]:
        check_stopping()  # a stopped run redoes this session (what it wrote stays written)
        index = state["turn"]
        turn = self.session.turns[index]
        await self._step(
            tool_observe_text(
                session_key=self.session.key,
                session_date=self.session.date,
                turn_number=index + 1,
                turns=len(self.session.turns),
                role=turn.role,
                content=turn.content,
                window=state["window"],
                history=self.calls.history,
                results=self.calls.last_results,
            )
        )
        window = next_window(
            state["window"], turn.role, turn.content, self.settings.window_messages
        )
        return {"turn": index + 1, "window": window}

    async def close(self, state: SessionState) -> dict[str, Any]:
        await self._step(
            tool_session_end_text(
                self.session.key, self.session.date, self.calls.history, self.calls.last_results
            )
        )
        return {}

    async def run(self) -> ToolSessionRun:
        state = start_state(len(self.session.turns), None)
        limit = self.settings.max_steps_per_session
        stopped = await run_graph(self, "agentic", state, limit)
        if stopped is not None:
            return ToolSessionRun(self.calls, "step-cap", stopped)
        return ToolSessionRun(self.calls)
