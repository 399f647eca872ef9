"""What the memory agent reads when it writes with a memory server's own tools.

One system message of ours (prompts/tools/v1), loaded once per agent; the server describes its
tools itself. Each observed message names its session by the opaque key and the date, with a
short window of recent messages, the calls made so far in the session (names and outcomes) and
the results of the last step's calls, so the prompt grows linearly with the session.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from importlib import resources

from lme_bench.agent.prompts import AgentPrompts

RESULT_CHARS = 400  # of each tool result shown back to the agent


def tool_prompts() -> AgentPrompts:
    folder = resources.files("lme_bench.agent").joinpath("prompts", "tools", "v1")
    system = folder.joinpath("agentic.md").read_text("utf-8").strip()
    return AgentPrompts(system, folder.joinpath("VERSION").read_text("utf-8").strip())


def history_line(history: Sequence[tuple[str, str]]) -> str:
    """(tool, "ok" | "error") in call order, repeats folded:
    `create_entities ok, add_observations ok 3 times`."""
    parts = []
    for (name, outcome), group in itertools.groupby(history):
        count = len(list(group))
        parts.append(f"{name} {outcome}" + (f" {count} times" if count > 1 else ""))
    return ", ".join(parts) or "none"


def _calls_block(history: Sequence[tuple[str, str]], results: Sequence[tuple[str, str]]) -> str:
    lines = [f"Your tool calls so far in this session: {history_line(history)}"]
    if results:
        lines.append("Results of your last tool calls:")
        for name, text in results:
            flat = " ".join(text.split())
            cut = flat if len(flat) <= RESULT_CHARS else flat[: RESULT_CHARS - 1] + "…"
            lines.append(f"- {name}: {cut}")
    return "\n".join(lines)


def _session_line(session_key: str, session_date: str) -> str:
    return f"Session {session_key} of {session_date} (the key is opaque: copy it as it is)."


def tool_observe_text(
    *,
    session_key: str,
    session_date: str,
    turn_number: int,
    turns: int,
    role: str,
    content: str,
    window: Sequence[tuple[str, str]],
    history: Sequence[tuple[str, str]],
    results: Sequence[tuple[str, str]],
) -> str:
    recent = "\n".join(f"{r}: {c}" for r, c in window) or "(none)"
    return (
        f"{_session_line(session_key, session_date)}\n"
        f"{_calls_block(history, results)}\n\n"
        f"Recent messages:\n{recent}\n\n"
        f"[observe] session {session_key} of {session_date}, message {turn_number} of {turns},"
        f" {role}:\n{content}"
    )


def tool_session_end_text(
    session_key: str,
    session_date: str,
    history: Sequence[tuple[str, str]],
    results: Sequence[tuple[str, str]],
) -> str:
    return (
        f"{_session_line(session_key, session_date)}\n"
        f"{_calls_block(history, results)}\n\n"
        f"[session end] The session {session_key} of {session_date} is over. Record what is"
        " still worth keeping from it, or call no tool."
    )
