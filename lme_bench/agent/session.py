"""One session through the memory agent: a fresh agent (its own state and toolset) runs a
LangGraph graph whose shape is compiled once per mode.

agentic:       observe (1 model call per message, tool calls taken, no chat) … → close (1 call
               at session end) → END
context-only:  summarise (1 call: the prior context and the whole session once) → END

The toolset decides what the agent's calls do and what it is shown (`Toolset`): our entry tools
(tools.py: add_entry / put_context buffered in `SessionWrites`, which the caller stores when
the session ends) or the memory system's own tools, called as the model asks (server_tools.py).
The graph's step cap (recursion limit) and a per-turn tool-call cap bound a misbehaving model;
hitting the step cap is recorded, not raised.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph

from lme_bench.agent.copied_escapes import without_copied_escapes
from lme_bench.agent.prompts import AgentPrompts, context_only_text, for_speakers
from lme_bench.agent.state import SessionState, next_window, start_state
from lme_bench.agent.tools import Observed
from lme_bench.common.stop_signal import check_stopping
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import SessionView
from lme_bench.providers.calls import CountedModel


class Toolset(Protocol):
    """What the agent's tool calls do, and the text of each step."""

    @property
    def context(self) -> str | None:
        """The context document written in this session so far (None: none, or not ours)."""
        ...

    def observe_text(
        self, session: SessionView, index: int, state: SessionState, context_due: bool
    ) -> str: ...

    def end_text(self, session: SessionView, state: SessionState) -> str: ...

    async def take(self, reply: AIMessage, observed: Observed | None) -> None:
        """Act on the tool calls of one reply (`observed`: the message it is about)."""
        ...


@dataclass
class SessionRun:
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
        tools: Toolset,
        start_context: str | None = None,
        context_model: CountedModel | None = None,
    ) -> None:
        self.model = model
        self.context_model = context_model or model  # for the session-end (context) call
        speakers = list(dict.fromkeys(t.speaker for t in session.turns if t.speaker))
        self.system = SystemMessage(for_speakers(prompts.system, speakers))
        self.settings = settings
        self.session = session
        self.tools = tools
        self.start_context = start_context

    async def _call(self, text: str, model: CountedModel) -> AIMessage:
        reply = await model.ainvoke([self.system, HumanMessage(text)])
        return without_copied_escapes(reply, f"{self.system.content}\n{text}")

    async def observe(self, state: SessionState) -> dict[str, Any]:
        check_stopping()  # a stopped run redoes this session
        index = state["turn"]
        turn = self.session.turns[index]
        due = (index + 1) % self.settings.context_every == 0 and index + 1 < len(self.session.turns)
        text = self.tools.observe_text(self.session, index, state, due)
        observed = Observed(self.session.key, self.session.date, index, turn.role, turn.content)
        await self.tools.take(await self._call(text, self.model), observed)
        window = next_window(
            state["window"], turn.role, turn.content, self.settings.window_messages
        )
        context = self.tools.context or state["context"]
        return {"turn": index + 1, "window": window, "context": context}

    async def close(self, state: SessionState) -> dict[str, Any]:
        text = self.tools.end_text(self.session, state)
        await self.tools.take(await self._call(text, self.context_model), None)
        return {"context": self.tools.context or state["context"]}

    async def summarise(self, state: SessionState) -> dict[str, Any]:
        turns = [(t.role, t.content) for t in self.session.turns]
        text = context_only_text(self.session.date, state["context"], turns)
        await self.tools.take(await self._call(text, self.context_model), None)
        return {"context": self.tools.context or state["context"]}

    async def run(self) -> SessionRun:
        state = start_state(len(self.session.turns), self.start_context)
        limit = self.settings.max_steps_per_session
        config: RunnableConfig = {"recursion_limit": limit, "configurable": {"agent": self}}
        try:
            await _graph(self.settings.mode).ainvoke(state, config=config)
        except GraphRecursionError:
            return SessionRun("step-cap", f"agent stopped at {limit} steps")
        return SessionRun()


def _agent(config: RunnableConfig) -> SessionAgent:
    agent: SessionAgent = config["configurable"]["agent"]
    return agent


async def _observe(state: SessionState, config: RunnableConfig) -> dict[str, Any]:
    return await _agent(config).observe(state)


async def _close(state: SessionState, config: RunnableConfig) -> dict[str, Any]:
    return await _agent(config).close(state)


async def _summarise(state: SessionState, config: RunnableConfig) -> dict[str, Any]:
    return await _agent(config).summarise(state)


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
