"""Agentic ingestion for a memory system that hands its own tools to an agent
(Capability.AGENT_TOOLS) instead of an entry surface: the writer of the ingestion loop (loop.py)
that runs each session through a fresh memory agent (agent/session.py) writing with those tools
(agent/server_tools.py).

A session is saved as pending before its agent starts and marked done once the system is ready
after it. A retry skips done sessions and redoes any other from its first message: the agent's
calls reached the memory as they were made, so a session cut off midway is written again, and a
server whose tools are not idempotent may then hold some of that session's writes twice.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from lme_bench.agent.server_tools import ServerTools
from lme_bench.agent.session import SessionAgent
from lme_bench.agent.tool_prompts import tool_prompts
from lme_bench.backends.capabilities import agent_tools_of
from lme_bench.backends.protocol import MemorySystem
from lme_bench.common.limits import Limiter
from lme_bench.common.waits import timed_call
from lme_bench.config.settings import ConfigError, IngestSettings
from lme_bench.dataset.views import SessionView
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord
from lme_bench.ingest.system_calls import add_system_calls
from lme_bench.providers.calls import CallAccount, CountedModel, set_call_columns
from lme_bench.providers.retry import RetryPolicy

MODE = "agentic"


async def agent_tools(system: MemorySystem, memory_id: str) -> list[BaseTool]:
    """The memory's tools as LangChain tools, from a system that offers them."""
    source = agent_tools_of(system)
    if source is None:
        raise ConfigError(
            f"[ingest] mode = 'agentic': memory system {system.name!r} as configured gives an"
            " agent no tools of its own (no agent-tools capability); use mode = 'raw'"
        )
    tools: list[BaseTool] = await source.agent_tools(memory_id)
    if not tools:
        raise ConfigError(f"memory system {system.name!r} gave the agent no tools")
    return tools


class ToolAgentWriter:
    """Writes each session through a fresh memory agent with the memory system's own tools (a
    writer of the ingestion loop, loop.py)."""

    mode = MODE

    def __init__(
        self,
        system: MemorySystem,
        model: BaseChatModel,
        settings: IngestSettings,
        checkpoints: Checkpoints,
        policy: RetryPolicy,
        limiter: Limiter | None = None,
    ) -> None:
        self.system = system
        self.chat_model = model
        self.settings = settings
        self.checkpoints = checkpoints
        self.policy = policy
        self.limiter = limiter
        self.prompts = tool_prompts()
        self.tools: list[BaseTool] = []
        self.model: Any = None

    async def start(self, memory_id: str) -> None:
        self.tools = await agent_tools(self.system, memory_id)
        # "auto" said outright: some servers (llama.cpp's) offer no tool call without it
        self.model = self.chat_model.bind_tools(self.tools, tool_choice="auto")

    async def finish(self, memory_id: str) -> None:
        return None  # each session is marked done once the system is ready after it

    async def write(
        self, question_id: str, index: int, session: SessionView, memory_id: str, pending: bool
    ) -> SessionRecord:
        """A session left pending is redone from its first message."""
        with timed_call() as clock:  # waits on lme-bench (limiters) kept apart
            record = SessionRecord(
                question_id=question_id,
                session_key=session.key,
                session_index=index,
                mode=MODE,
                turns=len(session.turns),
            )
            self.checkpoints.save_pending(memory_id, record, [], None)
            before = self.system.usage()
            account = CallAccount()
            counted = CountedModel(self.model, self.policy, account, self.limiter)
            tools = ServerTools(self.tools, self.settings)
            run = await SessionAgent(counted, self.prompts, self.settings, session, tools).run()
            await self.system.wait_until_ready(memory_id)
            calls = tools.calls
            record.llm_calls = account.calls
            record.input_tokens = account.input_tokens
            record.output_tokens = account.output_tokens
            record.tool_calls = dict(calls.asked)
            record.memory_calls = {**calls.made, "wait_until_ready": 1}
            record.dropped_tool_calls = calls.dropped
            record.unusable_tool_calls = dict(calls.unusable)
            record.status = run.status
            record.error = run.error or ("; ".join(calls.problems) or None)
            set_call_columns(record, account)
            record.seconds, record.wait_seconds = clock.own_seconds, clock.wait_seconds
            add_system_calls(record, self.system, before)
            self.checkpoints.mark_done(memory_id, record)
        return record
