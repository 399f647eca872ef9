"""fake:mem0-extractor, a stand-in for the model mem0 asks to extract memories.

mem0 2.2.1 makes one call per `add`: its additive-extraction prompt, whose user message lists
the conversation under `## New Messages` as `user: ...` / `assistant: ...` lines and asks for
`{"memory": [{"id", "text", "attributed_to"}]}`. This policy answers with one memory per
sentence of the user's messages, quoted exactly, so whatever mem0 stores was in its input.
"""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage, BaseMessage

_NEW_MESSAGES = re.compile(r"## New Messages\n(?P<messages>.*?)(?:\n\n## |\Z)", re.S)
_SPEAKER = re.compile(r"^(user|assistant|system): ", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def user_messages(prompt: str) -> list[str]:
    """The user's messages in the prompt's `## New Messages` section, in order."""
    found = _NEW_MESSAGES.search(prompt)
    if not found:
        return []
    parts = _SPEAKER.split(found.group("messages"))  # ["", role, text, role, text, ...]
    turns = zip(parts[1::2], parts[2::2], strict=True)
    return [text.strip() for role, text in turns if role == "user"]


def mem0_extractor(messages: list[BaseMessage]) -> AIMessage:
    prompt = str(messages[-1].content) if messages else ""
    sentences = [
        sentence.strip()
        for message in user_messages(prompt)
        for sentence in _SENTENCE_END.split(message)
        if sentence.strip()
    ]
    memories = [
        {"id": str(i), "text": sentence, "attributed_to": "user"}
        for i, sentence in enumerate(sentences)
    ]
    return AIMessage(content=json.dumps({"memory": memories}))
