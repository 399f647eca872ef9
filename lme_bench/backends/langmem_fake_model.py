"""fake:langmem-extractor, a stand-in for the model behind LangMem's memory manager.

LangMem shows the model the session between `<session_…>` tags, each message under a header
such as `=== Human Message ===`, and offers the `Memory` tool. This policy answers with one
`Memory` call per user message, its content the message's text, so extraction runs end to end
and every stored memory is text the memory was given.
"""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, BaseMessage

_SESSION = re.compile(r"<session_(?P<id>[^>]+)>\n(?P<body>.*)\n</session_(?P=id)>", re.S)
_HEADER = re.compile(r"^=+ (?P<kind>\w+) Message =+$", re.M)


def user_messages(prompt: str) -> list[str]:
    """The user messages of the session in a LangMem manager prompt, in order."""
    session = _SESSION.search(prompt)
    if session is None:
        return []
    parts = _HEADER.split(session.group("body"))  # ["", kind, text, kind, text, ...]
    texts = (text.strip() for kind, text in zip(parts[1::2], parts[2::2], strict=True))
    return [text for kind, text in zip(parts[1::2], texts, strict=True) if kind == "Human" and text]


def langmem_extractor(messages: list[BaseMessage]) -> AIMessage:
    prompt = "\n".join(str(message.content) for message in messages)
    calls = [
        {"name": "Memory", "args": {"content": text}, "id": f"memory_{i}", "type": "tool_call"}
        for i, text in enumerate(user_messages(prompt))
    ]
    return AIMessage(content="", tool_calls=calls)
