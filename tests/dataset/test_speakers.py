"""Named speakers reach the memory side as data: a LoCoMo turn's speaker is in the view, in the
protocol's `Turn.speaker` and in the memory agent's instructions; LongMemEval's turns have none
and its sessions and prompts are what they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.agent.prompts import _ours, for_speakers
from lme_bench.agent.tool_prompts import tool_prompts
from lme_bench.backends.mcp_tools import session_text
from lme_bench.backends.protocol import Turn
from lme_bench.benchmarks.split import splitter_for
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.dataset.views import make_view
from lme_bench.ingest.as_they_are import protocol_session
from lme_bench.run.steps import bundled_sample
from tests.benchmarks.locomo.samples import listed_sample, write_json

SYSTEM_MESSAGES = [_ours("agentic")[0], _ours("context-only")[0], tool_prompts().system]


def test_a_locomo_turn_names_its_speaker_in_the_protocol(tmp_path: Path) -> None:
    data = write_json(tmp_path / "locomo.json", [listed_sample("conv-7")])
    view = make_view(
        prepare_dataset(data, tmp_path / "c", *splitter_for(None, data)).questions[0].load()
    )[0]
    session = protocol_session(view.sessions[0])
    assert session.turns == (
        Turn(0, "user", "Ada: I adopted a greyhound called Pip.", "Ada"),
        Turn(
            1,
            "user",
            "Ben: Lovely! Here is my garden. [shares a photo: a photo of tomatoes on a vine]",
            "Ben",
        ),
    )


def test_longmemeval_turns_have_no_speaker(tmp_path: Path) -> None:
    refs = prepare_dataset(bundled_sample(), tmp_path / "c", None, "").questions
    view = make_view(refs[0].load())[0]
    session = protocol_session(view.sessions[0])
    assert all(turn.speaker is None for turn in session.turns)
    assert session.turns == tuple(
        Turn(i, t.role, t.content) for i, t in enumerate(view.sessions[0].turns)
    )


@pytest.mark.parametrize("system", SYSTEM_MESSAGES)
def test_the_memory_agent_is_told_who_speaks(system: str) -> None:
    assert for_speakers(system, []) == system  # LongMemEval's: byte for byte
    named = for_speakers(system, ["Ada", "Ben"])
    assert "a user and an AI assistant" not in named
    assert "between Ada and Ben" in named and "starts with its speaker's name" in named


def test_a_session_text_names_the_speaker_once() -> None:
    locomo = [Turn(0, "user", "Ada: Hi.", "Ada"), Turn(1, "user", "Hello.", "Ben")]
    assert session_text(locomo) == "Ada: Hi.\nBen: Hello."
    longmemeval = [Turn(0, "user", "Hi."), Turn(1, "assistant", "Hello.")]
    assert session_text(longmemeval) == "user: Hi.\nassistant: Hello."
