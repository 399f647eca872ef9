"""What the memory agent reads: one system message, loaded once per agent, and the per-turn text.

The system message joins the memory system's own prompts (get_default_prompts, Mycelian's
shape) — or ours when it has none — with our instructions for the ingestion mode. Turns arrive
as "observe" messages with the session date; the agent sees the running context and a short
window of recent messages, never the whole transcript again, so prompt size grows linearly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

MODES = ("agentic", "context-only")


@dataclass(frozen=True, slots=True)
class AgentPrompts:
    system: str
    version: str  # "<memory system prompts version>+<ours>"


def _ours(mode: str) -> tuple[str, str]:
    folder = resources.files("lme_bench.agent").joinpath("prompts", "v1")
    name = "agentic.md" if mode == "agentic" else "context_only.md"
    return folder.joinpath(name).read_text("utf-8"), folder.joinpath("VERSION").read_text().strip()


def build_prompts(memory_prompts: dict[str, Any], mode: str) -> AgentPrompts:
    """One system message from the memory system's prompts and our mode instructions."""
    instructions, ours = _ours(mode)
    templates = memory_prompts.get("templates") or {}
    parts = [
        instructions,
        "# Context rules\n\n" + str(memory_prompts.get("context_summary_rules", "")),
    ]
    if mode == "agentic":
        for name in ("entry_capture_prompt", "summary_prompt"):
            if templates.get(name):
                parts.append(f"# {name.replace('_', ' ').capitalize()}\n\n{templates[name]}")
    if templates.get("context_prompt"):
        parts.append(f"# Context prompt\n\n{templates['context_prompt']}")
    version = f"{memory_prompts.get('version', 'unknown')}+{ours}"
    return AgentPrompts("\n\n".join(p.strip() for p in parts if p.strip()), version)


_USER_AND_ASSISTANT = re.compile(r"a user\s+and an AI assistant")


def _names(speakers: Sequence[str]) -> str:
    if len(speakers) == 1:
        return f"{speakers[0]} and another person"
    return ", ".join(speakers[:-1]) + f" and {speakers[-1]}"


def for_speakers(system: str, speakers: Sequence[str]) -> str:
    """The system message for a session of named people (LoCoMo's two speakers): it names
    them where our instructions speak of a user and an AI assistant, and says how their
    messages come. Without names (LongMemEval) the message is `system` unchanged."""
    if not speakers:
        return system
    named = _USER_AND_ASSISTANT.sub(_names(speakers), system)
    return (
        f"{named}\n\n# Speakers\n\n"
        f"This conversation is between {_names(speakers)}; none of them is an AI assistant. Every"
        " message comes as a user message that starts with its speaker's name. Where these"
        " instructions speak of the user, read: whichever person is speaking, and say by name"
        " who said or did what."
    )


def _context_block(context: str | None) -> str:
    return context.strip() if context and context.strip() else "(empty: no context written yet)"


def observe_text(
    *,
    session_date: str,
    turn_number: int,
    turns: int,
    role: str,
    content: str,
    context: str | None,
    window: Sequence[tuple[str, str]],
    context_due: bool,
) -> str:
    recent = "\n".join(f"{r}: {c}" for r, c in window) or "(none)"
    due = "\nA context update is due: call put_context as well." if context_due else ""
    return (
        f"Current context document:\n{_context_block(context)}\n\n"
        f"Recent messages:\n{recent}\n\n"
        f"[observe] session of {session_date}, message {turn_number} of {turns}, {role}:\n"
        f"{content}{due}"
    )


def session_end_text(session_date: str, context: str | None) -> str:
    return (
        f"Current context document:\n{_context_block(context)}\n\n"
        f"[session end] The session of {session_date} is over. Call put_context once with the "
        "complete updated context document."
    )


def context_only_text(
    session_date: str, context: str | None, turns: Sequence[tuple[str, str]]
) -> str:
    transcript = "\n".join(f"{role}: {content}" for role, content in turns)
    return (
        f"Current context document:\n{_context_block(context)}\n\n"
        f"[session] Conversation of {session_date}:\n{transcript}\n\n"
        "[session end] Call put_context once with the complete updated context document."
    )


def bootstrap_block(entries: Sequence[str]) -> str:
    """Recent entries read before the session, appended to the context the agent starts from."""
    return "Recent entries:\n" + "\n".join(f"- {e}" for e in entries) if entries else ""
