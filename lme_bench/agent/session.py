"""One session through the memory agent: a fresh agent (its own state and buffered writes)
runs a LangGraph graph whose shape is compiled once per mode.

agentic:       observe (1 model call per message, tool calls taken, no chat) … → close (1 call:
               the final put_context) → END
context-only:  summarise (1 call: the prior context and the whole session once) → END

The graph's step cap (recursion limit) and a per-turn tool-call cap bound a misbehaving model;
hitting the step cap is recorded, not raised. The writes the model asked for stay buffered in
`SessionWrites`; the caller stores them when the session ends. tool_session.py runs the agentic
graph with a memory system's own tools instead (`run_graph`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph

from lme_bench.agent.prompts import (
    AgentPrompts,
    context_only_text,
    observe_text,
    session_end_text,
)
from lme_bench.agent.tools import Observed, SessionWrites
from lme_bench.common.stop_signal import check_stopping
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import SessionView
from lme_bench.providers.calls import CountedModel


class SessionState(TypedDict):
    turn: int
    turns: int
    window: list[tuple[str, str]]
    context: str | None


class SessionSteps(Protocol):
    """The agentic graph's steps: one per observed message, then one at session end."""

    async def observe(self, state: SessionState) -> dict[str, Any]: ...

    async def close(self, state: SessionState) -> dict[str, Any]: ...


def start_state(turns: int, context: str | None) -> SessionState:
    return {"turn": 0, "turns": turns, "window": [], "context": context}


def next_window(
    window: list[tuple[str, str]], role: str, content: str, keep: int
) -> list[tuple[str, str]]:
    """The recent messages shown with the next turn (the last `keep`)."""
    return [*window, (role, content)][-keep:] if keep else []


async def run_graph(agent: SessionSteps, mode: str, state: SessionState, limit: int) -> str | None:
    """Run the mode's graph on `agent`'s steps; the reason when it stopped at the step cap."""
    config: RunnableConfig = {"recursion_limit": limit, "configurable": {"agent": agent}}
    try:
        await _graph(mode).ainvoke(state, config=config)
    except GraphRecursionError:
        return f"agent stopped at {limit} steps"
    return None


@dataclass
class SessionRun:
    writes: SessionWrites
    status: str = "ok"  # ok | step-cap
    error: str | None = None


class SessionAgent:
    """A fresh agent for one session: its system message is built once, here."""

    def __init__(
        self,
        model: CountedModel,
        prompts: AgentPrompts,
        settings: IngestSettings,
        session: SessionView,
        start_context: str | None,
        context_model: CountedModel | None = None,
    ) -> None:
        self.model = model
        self.context_model = context_model or model  # for the call that writes the context
        self.system = SystemMessage(prompts.system)
        self.settings = settings
        self.session = session
        self.start_context = start_context
        self.writes = SessionWrites()
        self.allowed = (
            ("add_entry", "put_context") if settings.mode == "agentic" else ("put_context",)
        )

    async def _call(self, text: str, model: CountedModel | None = None) -> AIMessage:
        return await (model or self.model).ainvoke([self.system, HumanMessage(text)])

    def _take(self, reply: AIMessage, observed: Observed | None) -> str | None:
        self.writes.apply(
            [dict(call) for call in reply.tool_calls],
            observed,
            cap=self.settings.max_tool_calls_per_turn,
            allowed=self.allowed,
            unparsed=[dict(call) for call in reply.invalid_tool_calls],
        )
        return self.writes.context

    async def observe(self, state: SessionState) -> dict[str, Any]:
        check_stopping()  # a stopped run drops this session's buffered writes: it is redone
        index = state["turn"]
        turn = self.session.turns[index]
        due = (index + 1) % self.settings.context_every == 0 and index + 1 < len(self.session.turns)
        text = observe_text(
            session_date=self.session.date,
            turn_number=index + 1,
            turns=len(self.session.turns),
            role=turn.role,
            content=turn.content,
            context=state["context"],
            window=state["window"],
            context_due=due,
        )
        observed = Observed(self.session.key, self.session.date, index, turn.role, turn.content)
        context = self._take(await self._call(text), observed)
        window = next_window(
            state["window"], turn.role, turn.content, self.settings.window_messages
        )
        return {"turn": index + 1, "window": window, "context": context or state["context"]}

    async def close(self, state: SessionState) -> dict[str, Any]:
        text = session_end_text(self.session.date, state["context"])
        reply = await self._call(text, self.context_model)
        return {"context": self._take(reply, None) or state["context"]}

    async def summarise(self, state: SessionState) -> dict[str, Any]:
        turns = [(t.role, t.content) for t in self.session.turns]
        text = context_only_text(self.session.date, state["context"], turns)
        reply = await self._call(text, self.context_model)
        return {"context": self._take(reply, None) or state["context"]}

    async def run(self) -> SessionRun:
        state = start_state(len(self.session.turns), self.start_context)
        limit = self.settings.max_steps_per_session
        stopped = await run_graph(self, self.settings.mode, state, limit)
        if stopped is not None:
            return SessionRun(self.writes, "step-cap", stopped)
        return SessionRun(self.writes)


def _agent(config: RunnableConfig) -> SessionSteps:
    agent: SessionSteps = config["configurable"]["agent"]
    return agent


async def _observe(state: SessionState, config: RunnableConfig) -> dict[str, Any]:
    return await _agent(config).observe(state)


async def _close(state: SessionState, config: RunnableConfig) -> dict[str, Any]:
    return await _agent(config).close(state)


async def _summarise(state: SessionState, config: RunnableConfig) -> dict[str, Any]:
    agent: SessionAgent = config["configurable"]["agent"]  # context-only: ours alone
    return await agent.summarise(state)


def _next_step(state: SessionState) -> str:
    return "observe" if state["turn"] < state["turns"] else "close"


@functools.cache  # compiling costs milliseconds, as much as the rest of a session's own work
def _graph(mode: str) -> Any:
    """The graph of a mode; each run gets its session's agent in its config."""
    graph = StateGraph(SessionState)
    if mode == "context-only":
        graph.add_node("summarise", _summarise)
        graph.add_edge(START, "summarise")
        graph.add_edge("summarise", END)
        return graph.compile()
    graph.add_node("observe", _observe)
    graph.add_node("close", _close)
    graph.add_conditional_edges(START, _next_step, ["observe", "close"])
    graph.add_conditional_edges("observe", _next_step, ["observe", "close"])
    graph.add_edge("close", END)
    return graph.compile()
