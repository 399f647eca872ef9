"""fake:graphiti-extractor: answers Graphiti's structured-output prompts without a model.

Graphiti ends each request with "Respond with a JSON object in the following format:" and the
JSON schema of the reply it wants. This policy reads the schema's title and builds the reply
from the prompt's own text, deterministically:
- entities (ExtractedEntities): the speakers, then the capitalised words and runs of them in
  the CURRENT MESSAGE;
- facts (ExtractedEdges): each sentence of the message, as a fact from its speaker to the first
  entity it names (else to the other speaker), true from the REFERENCE_TIME on (EdgeTimestamps
  likewise); at most MAX_FACTS, the opening speaker's first;
- duplicates (NodeResolutions): an entity is the existing one with the same name, else new;
  facts (EdgeDuplicate) are never duplicates or contradictions;
- summaries (SummarizedEntities, Summary): the message's sentences that name the entity.
Any other schema gets the smallest object that fits it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

SCHEMA_MARK = "Respond with a JSON object in the following format:"
MAX_ENTITIES = 12
MAX_FACTS = 24
SUMMARY_CHARS = 240
_SPEAKER = re.compile(r"^(?P<speaker>[A-Za-z][\w ]{0,30}):\s*(?P<text>.*)$")
_CAPITALISED = re.compile(r"\b[A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NOT_NAMES_TEXT = (
    "i i'm i've i'd i'll a an the my we it this that these those what when where which who why"
    " how can could do does did is are was were yes no hi hello hey thanks thank ok okay sure"
    " please also and but or so if then here there you your he she they our their its let"
)
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())


def _section(text: str, *tags: str) -> str:
    for tag in tags:
        found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
        if found:
            return found.group(1).strip()
    return ""


def _json_section(text: str, tag: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(_section(text, tag) or "[]")
    except json.JSONDecodeError:
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _lines(message: str) -> list[tuple[str, str]]:
    """(speaker, text) per line of a "speaker: text" message; speaker "" when none."""
    lines = []
    for line in message.splitlines():
        found = _SPEAKER.match(line.strip())
        lines.append((found["speaker"], found["text"]) if found else ("", line.strip()))
    return [(speaker, text) for speaker, text in lines if text]


def _sentences(message: str) -> list[tuple[str, str]]:
    return [
        (speaker, sentence.strip())
        for speaker, text in _lines(message)
        for sentence in _SENTENCE_END.split(text)
        if sentence.strip()
    ]


def _names(message: str) -> list[str]:
    names: dict[str, str] = {}
    for speaker, text in _lines(message):
        if speaker:
            names.setdefault(speaker.casefold(), speaker)
        for found in _CAPITALISED.finditer(text):
            words = found.group(0).split()
            while words and words[0].casefold() in _NOT_NAMES:
                words = words[1:]
            if words:
                name = " ".join(words).rstrip("'-")
                names.setdefault(name.casefold(), name)
    return list(names.values())[:MAX_ENTITIES]


def _mentions(sentence: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", sentence) is not None


def extracted_entities(prompt: str) -> dict[str, Any]:
    message = _section(prompt, "CURRENT MESSAGE", "CURRENT_MESSAGE")
    return {
        "extracted_entities": [
            {"name": name, "entity_type_id": 0, "episode_indices": [0]} for name in _names(message)
        ]
    }


def _reference_time(prompt: str) -> str | None:
    """The prompt's REFERENCE_TIME in ISO 8601 with a Z suffix, or None."""
    text = _section(prompt, "REFERENCE_TIME", "REFERENCE TIME").split("#")[0].strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat() + "Z"


def edge_timestamps(prompt: str) -> dict[str, Any]:
    return {"valid_at": _reference_time(prompt), "invalid_at": None}


def extracted_edges(prompt: str) -> dict[str, Any]:
    message = _section(prompt, "CURRENT_MESSAGE", "CURRENT MESSAGE")
    valid_at = _reference_time(prompt)  # facts hold from the session on (the prompt's rule)
    names = [str(e["name"]) for e in _json_section(prompt, "ENTITIES") if "name" in e]
    speakers = [s for s in dict.fromkeys(s for s, _ in _lines(message)) if s in names]
    found = []
    for position, (speaker, sentence) in enumerate(_sentences(message)):
        named = [n for n in names if n not in speakers and _mentions(sentence, n)]
        source = speaker if speaker in names else (named.pop(0) if len(named) > 1 else "")
        listener = next((s for s in speakers if s != source), "")
        target = named[0] if named else listener
        if source and target:
            opener_first = 0 if speakers and speaker == speakers[0] else 1
            found.append((opener_first, position, source, target, sentence))
    kept = sorted(sorted(found)[:MAX_FACTS], key=lambda fact: fact[1])
    return {
        "edges": [
            {
                "source_entity_name": source,
                "target_entity_name": target,
                "relation_type": "STATES",
                "fact": sentence,
                "valid_at": valid_at,
                "invalid_at": None,
                "episode_indices": [0],
            }
            for _, _, source, target, sentence in kept
        ]
    }


def node_resolutions(prompt: str) -> dict[str, Any]:
    existing = {
        str(e.get("name", "")).casefold(): e.get("candidate_id", -1)
        for e in _json_section(prompt, "EXISTING ENTITIES")
    }
    return {
        "entity_resolutions": [
            {
                "id": entity.get("id", index),
                "name": entity.get("name", ""),
                "duplicate_candidate_id": existing.get(str(entity.get("name", "")).casefold(), -1),
            }
            for index, entity in enumerate(_json_section(prompt, "ENTITIES"))
        ]
    }


def _summary(text: str, name: str) -> str:
    found = [sentence for _, sentence in _sentences(text) if _mentions(sentence, name)]
    return " ".join(found)[:SUMMARY_CHARS]


def summarized_entities(prompt: str) -> dict[str, Any]:
    messages = _section(prompt, "MESSAGES")
    with contextlib.suppress(json.JSONDecodeError):  # the current message: a JSON string line
        messages = "\n".join(
            str(json.loads(line)) for line in messages.splitlines() if line.startswith('"')
        )
    summaries = []
    for entity in _json_section(prompt, "ENTITIES"):
        name = str(entity.get("name", ""))
        summary = _summary(messages, name) if name else ""
        if summary:
            summaries.append({"name": name, "summary": summary})
    return {"summaries": summaries}


def _minimal(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The smallest value that fits `schema` (required fields only)."""
    if "$ref" in schema:
        return _minimal(root.get("$defs", {}).get(schema["$ref"].split("/")[-1], {}), root)
    if "anyOf" in schema:
        options = schema["anyOf"]
        return None if {"type": "null"} in options else _minimal(options[0], root)
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _minimal(properties[name], root) for name in schema.get("required", [])}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def _schema(prompt: str) -> dict[str, Any]:
    start = prompt.rfind(SCHEMA_MARK)
    if start < 0:
        return {}
    rest = prompt[start + len(SCHEMA_MARK) :].lstrip()
    try:
        found, _ = json.JSONDecoder().raw_decode(rest)
    except json.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def edge_duplicate(prompt: str) -> dict[str, Any]:
    return {"duplicate_facts": [], "contradicted_facts": []}


_BUILDERS: dict[str, Callable[[str], dict[str, Any]]] = {
    "ExtractedEntities": extracted_entities,
    "ExtractedEdges": extracted_edges,
    "NodeResolutions": node_resolutions,
    "SummarizedEntities": summarized_entities,
    "EdgeTimestamps": edge_timestamps,
    "EdgeDuplicate": edge_duplicate,
}


def graphiti_extractor(messages: list[BaseMessage]) -> AIMessage:
    prompt = str(messages[-1].content) if messages else ""
    schema = _schema(prompt)
    builder = _BUILDERS.get(str(schema.get("title", "")))
    reply = builder(prompt) if builder else _minimal(schema, schema) or {}
    return AIMessage(content=json.dumps(reply, ensure_ascii=False))
