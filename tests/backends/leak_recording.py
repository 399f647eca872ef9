"""Recorders for the leak tests: every call a memory system is handed (its entry surface's too)
and every request any fake model receives (the memory system's own model, the memory agent,
the reader), read at the model call itself."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.providers.fake import ScriptedChatModel


def shown(value: Any) -> Any:
    """A call argument as text can show it (dataclasses as their fields)."""
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return asdict(value)
    return value


class CallRecorder:
    """Wraps a memory system (or its entry surface) and keeps every argument it is handed."""

    def __init__(self, system: Any, log: list[Any]) -> None:
        self.system, self.log = system, log

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.system, name)
        if name == "entries":
            return CallRecorder(found, self.log)
        if not callable(found) or name.startswith("_"):
            return found

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.log.append(
                {
                    "call": name,
                    "args": repr([shown(a) for a in args]),
                    "kwargs": repr({k: shown(v) for k, v in kwargs.items()}),
                }
            )
            return found(*args, **kwargs)

        return recorded


def _text(message: BaseMessage) -> str:
    parts = [str(message.content)]
    if isinstance(message, AIMessage):
        parts += [json.dumps(call["args"], ensure_ascii=False) for call in message.tool_calls]
    return "\n".join(parts)


def record_model_requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every request a scripted fake model answers from now on: its model name, the text of
    every message it was sent, the tools bound to it, and its reply (tool arguments included,
    as they go on to a memory)."""
    requests: list[dict[str, Any]] = []
    answer = ScriptedChatModel._next_reply

    def recorded(self: ScriptedChatModel, messages: list[BaseMessage], kwargs: Any) -> AIMessage:
        reply = answer(self, messages, kwargs)
        requests.append(
            {
                "model": self.model_name,
                "prompt": "\n".join(_text(m) for m in messages),
                "tools": json.dumps(kwargs.get("tools") or [], ensure_ascii=False),
                "reply": _text(reply),
            }
        )
        return reply

    monkeypatch.setattr(ScriptedChatModel, "_next_reply", recorded)
    return requests
