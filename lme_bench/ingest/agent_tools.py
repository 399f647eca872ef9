"""Agentic ingestion for a memory system that hands its own tools to an agent
(Capability.AGENT_TOOLS) instead of an entry surface: each session through a fresh memory agent
(lme_bench/agent/tool_session.py) that writes with those tools, checkpointed per session.

A session is saved as pending before its agent starts and marked done once the system is ready
after it. A retry skips done sessions and redoes any other from its first message: the agent's
calls reached the memory as they were made, so a session cut off midway is written again, and a
server whose tools are not idempotent may then hold some of that session's writes twice.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from lme_bench.agent.prompts import AgentPrompts
from lme_bench.agent.tool_prompts import tool_prompts
from lme_bench.agent.tool_session import ToolSessionAgent
from lme_bench.backends.protocol import Capability, MemorySystem
from lme_bench.common.limits import Limiter, numbered_sessions
from lme_bench.common.stop_signal import check_stopping
from lme_bench.config.settings import ConfigError, IngestSettings
from lme_bench.dataset.views import QuestionView, SessionView
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.calls import CallAccount, CountedModel, set_call_columns
from lme_bench.providers.retry import RetryPolicy

MODE = "agentic"


async def agent_tools(system: MemorySystem, memory_id: str) -> list[BaseTool]:
    """The memory's tools as LangChain tools, from a system that offers them."""
    if Capability.AGENT_TOOLS not in system.capabilities:
        raise ConfigError(
            f"[ingest] mode = 'agentic': memory system {system.name!r} as configured gives an"
            " agent no tools of its own (no agent-tools capability); use mode = 'raw'"
        )
    tools: list[BaseTool] = await getattr(system, "agent_tools")(memory_id)  # noqa: B009
    if not tools:
        raise ConfigError(f"memory system {system.name!r} gave the agent no tools")
    return tools


class ToolAgentIngestor:
    """Feeds one question's sessions, in date order, through the memory agent with the
    memory system's own tools."""

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

    async def session(
        self,
        question_id: str,
        index: int,
        session: SessionView,
        prompts: AgentPrompts,
        model: Any,
        tools: list[BaseTool],
        memory_id: str,
    ) -> SessionRecord:
        check_stopping()
        saved = self.checkpoints.load(memory_id, session.key, MODE)
        if saved is not None and saved[0] == "done":
            record = saved[1]
            record.resumed = True
            return record
        started = time.perf_counter()
        record = SessionRecord(
            question_id=question_id,
            session_key=session.key,
            session_index=index,
            mode=MODE,
            turns=len(session.turns),
        )
        self.checkpoints.save_pending(memory_id, record, [], None)
        account = CallAccount()
        counted = CountedModel(model, self.policy, account, self.limiter)
        run = await ToolSessionAgent(counted, prompts, self.settings, session, tools).run()
        await self.system.wait_until_ready(memory_id)
        calls = run.calls
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
        record.seconds = time.perf_counter() - started
        self.checkpoints.mark_done(memory_id, record)
        return record

    async def ingest(
        self, question_id: str, view: QuestionView, memory_id: str
    ) -> list[SessionRecord]:
        tools = await agent_tools(self.system, memory_id)
        # "auto" said outright: some servers (llama.cpp's) offer no tool call without it
        model = self.chat_model.bind_tools(tools, tool_choice="auto")
        prompts = tool_prompts()
        return [
            await self.session(question_id, i, s, prompts, model, tools, memory_id)
            for i, s in numbered_sessions(view.sessions)
        ]
