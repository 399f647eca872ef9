"""Agent ingestion (modes `agentic` and `context-only`) into a system with an entry surface: the
writer of the ingestion loop (loop.py) that runs each session through a fresh memory agent
(agent/session.py) with our entry tools, its writes stored when the session ends.

Before each session the agent bootstraps from memory once: the latest context and, in agentic
mode, the newest few entries. Model calls retry inside the session (throttling, 5xx, timeouts);
a session that still fails fails the question, and a retry resumes at that session.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from langchain_core.language_models import BaseChatModel

from lme_bench.agent.prompts import AgentPrompts, bootstrap_block, build_prompts
from lme_bench.agent.session import SessionAgent
from lme_bench.agent.tools import AGENTIC_TOOLS, CONTEXT_TOOLS, EntryTools
from lme_bench.common.limits import Limiter
from lme_bench.common.waits import timed_call
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.views import SessionView
from lme_bench.entries.capability import Entries
from lme_bench.entries.models import NewEntry
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.held import held_turns, missing
from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.calls import CallAccount, CountedModel, set_call_columns
from lme_bench.providers.retry import RetryPolicy
from lme_bench.reference_memory.tool_results import default_prompts


class AgentWriter:
    """Writes each session through a fresh memory agent with our entry tools (a writer of the
    ingestion loop, loop.py)."""

    def __init__(
        self,
        entries: Entries,
        model: BaseChatModel,
        settings: IngestSettings,
        checkpoints: Checkpoints,
        policy: RetryPolicy,
        limiter: Limiter | None = None,
    ) -> None:
        self.entries = entries
        self.mode: str = settings.mode
        self.settings = settings
        self.checkpoints = checkpoints
        self.policy = policy
        self.limiter = limiter
        # "auto" said outright: some servers (llama.cpp's) offer no tool call without it
        self.model: Any = model.bind_tools(AGENTIC_TOOLS, tool_choice="auto")
        required = "put_context" if settings.require_context_call else "auto"
        self.context_model: Any = model.bind_tools(CONTEXT_TOOLS, tool_choice=required)
        self.prompts: AgentPrompts | None = None

    async def start(self, memory_id: str) -> None:
        """The memory system's own prompts when it serves them, else ours; loaded once."""
        served = await self.entries.default_prompts("chat")
        self.prompts = build_prompts(served or default_prompts("chat"), self.settings.mode)

    async def finish(self, memory_id: str) -> None:
        return None  # each session is marked done once its writes are stored

    async def _store(
        self,
        memory_id: str,
        entries: list[NewEntry],
        context: str | None,
        calls: Counter[str],
    ) -> None:
        if entries:
            await self.entries.add_entries(memory_id, entries)
            calls["add_entry"] += len(entries)
        if context is not None:
            await self.entries.put_context(memory_id, context)
            calls["put_context"] += 1
        await self.entries.await_consistency(memory_id)
        calls["await_consistency"] += 1

    async def _bootstrap(
        self, memory_id: str, calls: Counter[str]
    ) -> tuple[str | None, str | None]:
        await self.entries.await_consistency(memory_id)
        context = await self.entries.get_context(memory_id)
        calls.update(["await_consistency", "get_context"])
        start = context
        if self.settings.mode == "agentic" and self.settings.bootstrap_entries:
            recent = await self.entries.recent_entries(memory_id, self.settings.bootstrap_entries)
            calls["list_entries"] += 1
            block = bootstrap_block([e.summary for e in recent])
            start = "\n\n".join(part for part in (context, block) if part) or None
        return context, start

    async def _replay(self, memory_id: str, session: SessionView) -> SessionRecord | None:
        """Store the saved copy of a session whose writes were saved but not confirmed, leaving
        out entries and a context snapshot the memory already holds; None if nothing was saved
        (the session is redone)."""
        saved = self.checkpoints.load(memory_id, session.key, self.mode)
        if saved is None or saved[0] != "pending":
            return None
        _, record, entries, context = saved
        entries = missing(entries, await held_turns(self.entries, memory_id))
        if context is not None and context == await self.entries.get_context(memory_id):
            context = None
        await self._store(memory_id, entries, context, Counter())
        self.checkpoints.mark_done(memory_id, record)
        record.resumed = True
        return record

    async def write(
        self, question_id: str, index: int, session: SessionView, memory_id: str, pending: bool
    ) -> SessionRecord:
        if pending:
            replayed = await self._replay(memory_id, session)
            if replayed is not None:
                return replayed
        assert self.prompts is not None, "start() loads the prompts"
        prompts, mode = self.prompts, self.mode
        with timed_call() as clock:  # waits on lme-bench (limiters) kept apart
            calls: Counter[str] = Counter()
            prior, start_context = await self._bootstrap(memory_id, calls)
            account = CallAccount()
            model = CountedModel(self.model, self.policy, account, self.limiter)
            context_model = CountedModel(self.context_model, self.policy, account, self.limiter)
            tools = EntryTools(self.settings)
            agent = SessionAgent(
                model, prompts, self.settings, session, tools, start_context, context_model
            )
            run = await agent.run()
            writes = tools.writes
            context = writes.context if writes.context and writes.context != prior else None
            record = SessionRecord(
                question_id=question_id,
                session_key=session.key,
                session_index=index,
                mode=mode,
                turns=len(session.turns),
                llm_calls=account.calls,
                tool_calls=dict(writes.tool_calls),
                input_tokens=account.input_tokens,
                output_tokens=account.output_tokens,
                entries_written=len(writes.entries),
                context_chars=len(context or ""),
                dropped_tool_calls=writes.dropped_calls,
                unusable_tool_calls=dict(writes.unusable),
                status=run.status,
                error=run.error or ("; ".join(writes.problems) or None),
            )
            set_call_columns(record, account)
            # The record saved with the writes already counts them, as a replay reports it.
            planned = calls.copy()
            planned.update(
                {"add_entry": len(writes.entries), "put_context": int(context is not None)}
                if writes.entries or context is not None
                else {}
            )
            planned["await_consistency"] += 1
            record.memory_calls = {name: n for name, n in planned.items() if n}
            record.seconds, record.wait_seconds = clock.own_seconds, clock.wait_seconds
            self.checkpoints.save_pending(memory_id, record, writes.entries, context)
            await self._store(memory_id, writes.entries, context, calls)
            record.memory_calls = dict(calls)
            record.seconds, record.wait_seconds = clock.own_seconds, clock.wait_seconds
            self.checkpoints.mark_done(memory_id, record)
        return record
