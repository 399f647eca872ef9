"""HTML escapes a model server added to the prompt, taken back out of what the model writes.

Some OpenAI-compatible servers render the chat through a template that HTML-escapes it:
llama-cpp-python's `chatml-function-calling` format (a Jinja template with autoescape on)
shows the model `Louis XVI&#39;s` where the user wrote `Louis XVI's`. A model that copies what
it read writes the escape back; stored, it is escaped again the next time it is shown
(`&amp;#39;`), and so on with every session. lme-bench itself escapes nothing on the way to
the model or the store.

A character reference in a tool call's text is taken back to its character when the text the
model was sent never holds that reference but does hold its character: the model can only
have read it from the server's escaping. References that were in the text sent stay as they
are, so text that really holds `&amp;` is kept.
"""

from __future__ import annotations

import html
import re
from typing import Any

from langchain_core.messages import AIMessage

# The references an HTML escaper writes for & < > " ' (markupsafe, html.escape, Jinja's own).
_REFERENCE = re.compile(
    r"&(?:amp|lt|gt|quot|apos|#0*(?:34|38|39|60|62)|#[xX]0*(?:22|26|27|3[cC]|3[eE]));"
)


def unescape_copied(written: str, sent: str) -> str:
    """`written` with each reference `sent` lacks, though `sent` holds its character, turned
    back into that character (in one pass: `&amp;#39;` becomes `&#39;`, not `'`)."""

    def back(match: re.Match[str]) -> str:
        reference = match.group(0)
        character = html.unescape(reference)
        return character if reference not in sent and character in sent else reference

    return _REFERENCE.sub(back, written) if "&" in written else written


def _unescaped(value: Any, sent: str) -> Any:
    if isinstance(value, str):
        return unescape_copied(value, sent)
    if isinstance(value, dict):
        return {key: _unescaped(item, sent) for key, item in value.items()}
    if isinstance(value, list):
        return [_unescaped(item, sent) for item in value]
    return value


def without_copied_escapes(reply: AIMessage, sent: str) -> AIMessage:
    """`reply` with the text arguments of its tool calls freed of escapes the server added."""
    if not reply.tool_calls or "&" not in str([call.get("args") for call in reply.tool_calls]):
        return reply
    calls = [
        {**call, "args": _unescaped(call.get("args") or {}, sent)} for call in reply.tool_calls
    ]
    return reply.model_copy(update={"tool_calls": calls})
