"""The memory system's own tools for the memory agent (Capability.AGENT_TOOLS, for systems
without an entry surface): the toolset of session.py's agent that makes each call as the model
asks for it, within the per-turn cap, in place of our buffered add_entry / put_context.

Unlike our own tools they cannot be buffered, since only the server knows what its tools do. A
tool's error goes back to the model with the next message, as its results do; a lost server
raises and fails the session. A call naming no tool the agent has, or whose arguments did not
parse or do not fit the tool's schema (agent/arguments.py), is not made: it is counted by
reason, and the model is told.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool

from lme_bench.agent.arguments import argument_problem
from lme_bench.agent.state import SessionState
from lme_bench.agent.tool_prompts import tool_observe_text, tool_session_end_text
from lme_bench.agent.tools import INVALID_ARGUMENTS, UNKNOWN_TOOL, UNPARSABLE_ARGUMENTS, Observed
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import SessionView

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


def result_text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        str(block.get("text", "")) if isinstance(block, dict) else str(block) for block in content
    )


class ServerTools:
    """One session's calls to the system's `tools` (bound to the agent's model already)."""

    context: str | None = None  # the system keeps its own state: no context document of ours

    def __init__(self, tools: Sequence[BaseTool], settings: IngestSettings) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.cap = settings.max_tool_calls_per_turn
        self.calls = ToolCalls()

    def observe_text(
        self, session: SessionView, index: int, state: SessionState, context_due: bool
    ) -> str:
        turn = session.turns[index]
        return tool_observe_text(
            session_key=session.key,
            session_date=session.date,
            turn_number=index + 1,
            turns=len(session.turns),
            role=turn.role,
            content=turn.content,
            window=state["window"],
            history=self.calls.history,
            results=self.calls.last_results,
        )

    def end_text(self, session: SessionView, state: SessionState) -> str:
        history, results = self.calls.history, self.calls.last_results
        return tool_session_end_text(session.key, session.date, history, results)

    def _unusable(
        self, results: list[tuple[str, str]], name: str, reason: str, problem: str
    ) -> None:
        self.calls.unusable[reason] += 1
        self.calls.problems.append(f"{name}: {problem}")
        self.calls.history.append((name, "error"))
        results.append((name, f"error: {problem}"))

    async def take(self, reply: AIMessage, observed: Observed | None) -> None:
        results: list[tuple[str, str]] = []
        for unparsed in reply.invalid_tool_calls:
            name = unparsed.get("name") or ""
            self.calls.asked[name] += 1
            self._unusable(results, name, UNPARSABLE_ARGUMENTS, "the arguments are not JSON")
        for number, call in enumerate(reply.tool_calls):
            name = call["name"]
            self.calls.asked[name] += 1
            if number >= self.cap:
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
