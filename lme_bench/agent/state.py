"""The memory agent's state over one session, as its graph (session.py) passes it on."""

from __future__ import annotations

from typing import TypedDict


class SessionState(TypedDict):
    turn: int  # the next message to observe
    turns: int
    window: list[tuple[str, str]]  # recent (role, content) shown with the next message
    context: str | None  # the context document as the agent last wrote it (ours only)


def start_state(turns: int, context: str | None) -> SessionState:
    return {"turn": 0, "turns": turns, "window": [], "context": context}


def next_window(
    window: list[tuple[str, str]], role: str, content: str, keep: int
) -> list[tuple[str, str]]:
    """The recent messages shown with the next turn (the last `keep`)."""
    return [*window, (role, content)][-keep:] if keep else []
