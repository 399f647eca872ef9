"""The memory agent driven by the scripted fake model, in both modes, against a real store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.config.settings import IngestSettings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view
from lme_bench.entries.capability import VaultEntries
from lme_bench.ingest.agent import AgentWriter
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.loop import feed_sessions
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import note_taker
from lme_bench.providers.retry import RetryPolicy
from tests.factories import make_question

FAST = RetryPolicy(base_s=0.001, throttle_base_s=0.001, jitter=0.0)


def _question(turns_per_session: int = 4) -> Instance:
    question = make_question()
    for session in question["haystack_sessions"]:
        while len(session) < turns_per_session:
            n = len(session)
            session.append(
                {
                    "role": "user" if n % 2 == 0 else "assistant",
                    "content": f"extra message {n} about kayaks",
                }
            )
    return Instance.model_validate(question)


class Setup:
    def __init__(self, tmp_path: Path, model: ScriptedChatModel, **ingest: Any) -> None:
        self.backend = EmbeddedEntryStore(tmp_path / "memory.sqlite")
        self.model = model
        self.settings = IngestSettings(**{"mode": "agentic", **ingest})
        self.checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
        self.vault = asyncio.run(self.backend.get_or_create_vault("v"))
        self.memory = asyncio.run(self.backend.get_or_create_memory(self.vault, "q__r"))
        self.entries_in_vault = VaultEntries(self.backend, "v")

    def run(self, instance: Instance) -> list[Any]:
        view, _ = make_view(instance)
        writer = AgentWriter(
            self.entries_in_vault, self.model, self.settings, self.checkpoints, FAST
        )
        question_id = instance.question_id
        return asyncio.run(feed_sessions(question_id, view, self.memory, self.checkpoints, writer))

    def entries(self) -> list[Any]:
        return self.backend.store.list_entries(self.memory)


def test_agentic_writes_tagged_entries_and_context_on_cadence(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[note_taker]), context_every=2)
    records = setup.run(_question(turns_per_session=4))
    # One call per observed message plus the session-end call.
    assert [r.llm_calls for r in records] == [5, 5]
    assert all(r.status == "ok" and r.mode == "agentic" for r in records)
    entries = setup.entries()
    assert len(entries) == 4  # note-taker keeps user messages only: 2 per session
    first = entries[0]
    assert first.raw_entry == "Any tips for a first week with a puppy?"  # the observed message
    assert first.tags == {
        "session_key": "s000",
        "turn_index": "0",
        "role": "user",
        "session_date": "2023/05/01 (Mon) 09:15",
        "source": "agent",
    }
    assert first.summary.startswith("2023/05/01 (Mon) 09:15: Any tips")
    assert records[0].tool_calls["put_context"] == 2  # due after message 2, and at session end
    context = setup.backend.store.latest_context(setup.memory)
    # The final context carries session 1's notes (bootstrap) and session 2's update.
    assert context is not None
    assert "Crate training" in context[0] and "Twelve to sixteen" in context[0]
    assert records[0].memory_calls["add_entry"] == 2 and records[0].memory_calls["put_context"] == 1


def test_the_llm_never_sees_ids_and_sees_the_date_and_running_context(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[note_taker]))
    setup.run(_question())
    sent = [str(m.content) for call in setup.model.calls for m in call.messages]
    text = "\n".join(sent)
    for hidden in (
        setup.memory,
        setup.vault,
        "s000",
        "s001",
        "answer_4be1b6b4",
        "has_answer",
        "sharegpt_Ab3dE9x_0",
        'golden retriever"',
    ):
        assert hidden not in text
    assert "[observe] session of 2023/05/01 (Mon) 09:15, message 1 of 4, user" in text
    system = setup.model.calls[0].messages[0]
    assert system.type == "system" and "Context rules" in str(system.content)
    # Later sessions start from the context the earlier ones wrote (bootstrap).
    second_session_first_call = setup.model.calls[5].messages[1].content
    assert "Current context document:\n(empty" not in str(second_session_first_call)


def test_context_only_is_one_call_per_session_with_the_prior_context(tmp_path: Path) -> None:
    replies = [
        AIMessage(
            content="",
            tool_calls=[{"name": "put_context", "args": {"content": "Facts: A"}, "id": "1"}],
        ),
        AIMessage(
            content="",
            tool_calls=[{"name": "put_context", "args": {"content": "Facts: A, B"}, "id": "2"}],
        ),
    ]
    setup = Setup(tmp_path, ScriptedChatModel(script=replies), mode="context-only")
    records = setup.run(_question())
    assert [r.llm_calls for r in records] == [1, 1]
    assert setup.model.calls[1].tools == ["put_context"]
    assert "Facts: A" in str(setup.model.calls[1].messages[1].content)
    assert setup.backend.store.latest_context(setup.memory)[0] == "Facts: A, B"  # type: ignore[index]
    assert setup.entries() == []


def test_caps_bound_a_runaway_model(tmp_path: Path) -> None:
    def spam(messages: list[BaseMessage]) -> AIMessage:
        calls = [
            {"name": "add_entry", "args": {"summary": "x" * 900}, "id": str(i)} for i in range(9)
        ]
        calls.append({"name": "delete_everything", "args": {}, "id": "z"})
        return AIMessage(content="", tool_calls=calls)  # type: ignore[arg-type]

    setup = Setup(tmp_path, ScriptedChatModel(script=[spam]), max_tool_calls_per_turn=3)
    records = setup.run(_question())
    entries = setup.entries()
    assert len(entries) == 8  # one entry per observed message, never more
    assert all(len(e.summary) <= 512 for e in entries)
    assert records[0].dropped_tool_calls > 0
    assert records[0].tool_calls["add_entry"] == 9 * 5


def test_step_cap_is_recorded_not_raised(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[note_taker]), max_steps_per_session=4)
    records = setup.run(_question(turns_per_session=8))
    assert records[0].status == "step-cap" and "4 steps" in (records[0].error or "")


def test_throttling_is_retried_inside_the_session(tmp_path: Path) -> None:
    model = ScriptedChatModel(script=[note_taker], throttle_every=3)
    setup = Setup(tmp_path, model)
    records = setup.run(_question())
    assert sum(r.retries for r in records) > 0 and all(r.status == "ok" for r in records)


def test_retries_are_recorded_by_cause(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        script=[note_taker], throttle_every=3, fault_every=4, fault_cause="connection"
    )
    records = Setup(tmp_path, model).run(_question())
    attempts = range(1, model.attempts + 1)
    throttled = sum(k % 3 == 0 for k in attempts)
    dropped = sum(k % 4 == 0 and k % 3 != 0 for k in attempts)
    assert throttled and dropped and all(r.status == "ok" for r in records)
    assert sum(r.llm_calls for r in records) == model.attempts - throttled - dropped
    assert sum(r.retries_throttled for r in records) == throttled
    assert sum(r.retries_connection for r in records) == dropped
    assert sum(r.retries_timeout + r.retries_server for r in records) == 0
    assert all(r.retries == r.retries_throttled + r.retries_connection for r in records)


def test_resume_continues_at_the_unfinished_session_without_duplicates(tmp_path: Path) -> None:
    class Boom(RuntimeError):
        pass

    def fail_in_second_session(messages: list[BaseMessage]) -> AIMessage:
        if "2023/05/20" in str(messages[-1].content):
            raise Boom("model down")
        return note_taker(messages)

    setup = Setup(tmp_path, ScriptedChatModel(script=[fail_in_second_session]))
    with pytest.raises(Boom):
        setup.run(_question())
    after_failure = len(setup.entries())
    assert after_failure == 2  # the first session landed whole, nothing of the second

    setup.model = ScriptedChatModel(script=[note_taker])
    records = setup.run(_question())
    assert [r.resumed for r in records] == [True, False]
    assert len(setup.model.calls) == 5  # only the unfinished session was redone
    assert len(setup.entries()) == 4

    setup.model = ScriptedChatModel(script=[note_taker])
    again = setup.run(_question())
    assert all(r.resumed for r in again) and setup.model.calls == []
    assert len(setup.entries()) == 4


def test_saved_but_unconfirmed_writes_are_stored_again_without_the_model(tmp_path: Path) -> None:
    setup = Setup(tmp_path, ScriptedChatModel(script=[note_taker]))
    real = setup.backend.add_entries
    calls = {"n": 0}

    async def crash_once(*args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("memory went away mid-write")
        await real(*args)

    setup.backend.add_entries = crash_once  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        setup.run(_question())
    setup.model = ScriptedChatModel(script=[note_taker])
    records = setup.run(_question())
    assert records[0].resumed and len(setup.model.calls) == 5  # session 1 from its saved copy
    assert len(setup.entries()) == 4


def test_prompt_grows_linearly_with_session_length(tmp_path: Path) -> None:
    def tokens(turns: int) -> int:
        setup = Setup(tmp_path / str(turns), ScriptedChatModel(script=[note_taker]))
        records = setup.run(_question(turns_per_session=turns))
        return records[0].input_tokens

    short, long = tokens(20), tokens(40)
    assert long <= 2.2 * short


def test_ingestion_calls_queue_by_start_then_by_sessions_left(tmp_path: Path) -> None:
    """Each model call asks the provider's limiter for a slot with its session's priority: the
    ingestion's start while questions wait to start, its sessions left once every one has
    started (see lme_bench.common.limits)."""
    from contextlib import asynccontextmanager
    from time import monotonic

    from lme_bench.common.limits import (
        call_priority,
        every_ingestion_started,
        ingestions_starting,
    )

    asked: list[tuple[float, ...]] = []

    class Recording:
        @asynccontextmanager
        async def slot(self) -> Any:
            asked.append(call_priority.get())
            yield

    setup = Setup(tmp_path, ScriptedChatModel(script=[note_taker]), mode="context-only")
    view, _ = make_view(_question())
    writer = AgentWriter(
        setup.entries_in_vault,
        setup.model,
        setup.settings,
        setup.checkpoints,
        FAST,
        limiter=Recording(),
    )
    ingestions_starting()
    before = monotonic()
    asyncio.run(feed_sessions("aa11bb22", view, setup.memory, setup.checkpoints, writer))
    assert len(asked) == 2 and asked[0] == asked[1]  # one call per session, one priority
    assert asked[0][0] == 1.0 and before <= asked[0][1] <= monotonic()

    asked.clear()
    every_ingestion_started()
    setup.checkpoints.forget(setup.memory)  # the same sessions again, as another question
    asyncio.run(feed_sessions("aa11bb22", view, setup.memory, setup.checkpoints, writer))
    ingestions_starting()
    assert [p[0] for p in asked] == [0.0, 0.0] and asked[0] < asked[1]  # 2 left, then 1
    assert call_priority.get() == ()  # set inside the ingestion only
