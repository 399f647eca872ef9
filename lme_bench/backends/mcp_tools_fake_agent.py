"""`fake:kg-note-taker`: a rule-based memory agent for knowledge-graph memory servers' own tools
(@modelcontextprotocol/server-memory's create_entities and add_observations), key-free.

Per session it keeps one entity named after the session, `<session key> on <session date>` as
our tools prompt asks (lme_bench/agent/prompts/tools/v1): the session's first user message
creates it with that message as its observation, each later one is added to it; assistant
messages and the session's end make no call. Without those tools bound it calls nothing.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.providers.fake import ToolPolicy

CREATE, ADD = "create_entities", "add_observations"
_ids = itertools.count()
_OBSERVED = re.compile(
    r"\[observe\] session (?P<key>\S+) of (?P<date>.+?), message \d+ of \d+, (?P<role>\w+):\n"
    r"(?P<text>.*)\Z",
    re.S,
)
_CREATED = re.compile(rf"^Your tool calls so far in this session: .*\b{CREATE} ok\b", re.M)


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"fake_kg_{next(_ids)}", "type": "tool_call"}


def kg_note_taker(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
    bound = {spec["function"]["name"] for spec in tools}
    text = str(messages[-1].content) if messages else ""
    observed = _OBSERVED.search(text)
    if not observed or observed.group("role") != "user" or not observed.group("text").strip():
        return AIMessage(content="")
    name = f"{observed.group('key')} on {observed.group('date')}"
    said = observed.group("text")
    if _CREATED.search(text) and ADD in bound:
        call = _call(ADD, {"observations": [{"entityName": name, "contents": [said]}]})
    elif CREATE in bound:
        entity = {"name": name, "entityType": "session", "observations": [said]}
        call = _call(CREATE, {"entities": [entity]})
    else:
        return AIMessage(content="")
    return AIMessage(content="", tool_calls=[call])


KG_NOTE_TAKER = ToolPolicy(kg_note_taker)
