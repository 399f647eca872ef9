"""A small MCP server with note tools of its own, over streamable HTTP: notes are kept apart by
a `book` argument of every tool (the mcp-tools backend's 'argument' scoping), carry whatever
`meta` the caller gives, and searches rank notes by the query words they share.

python -m tests.backends.notes_http_server PORT
"""

from __future__ import annotations

import re
import sys
from typing import Any

from mcp.server.fastmcp import FastMCP

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def build(port: int) -> FastMCP:
    server = FastMCP("notes", host="127.0.0.1", port=port, log_level="WARNING")
    books: dict[str, list[dict[str, Any]]] = {}

    @server.tool()
    def add_note(book: str, text: str, meta: dict[str, Any]) -> dict[str, Any]:
        """Keep a note in a book."""
        notes = books.setdefault(book, [])
        note = {"id": len(notes), "text": text, "meta": meta}
        notes.append(note)
        return note

    @server.tool()
    def find_notes(book: str, query: str, limit: int) -> dict[str, Any]:
        """The notes of a book sharing most words with the query, at most `limit`."""
        wanted = _words(query)
        scored = [(len(wanted & _words(n["text"])), n) for n in books.get(book, [])]
        ranked = sorted((pair for pair in scored if pair[0]), key=lambda pair: -pair[0])
        return {"notes": [note for _, note in ranked[:limit]]}

    @server.tool()
    def list_notes(book: str) -> dict[str, Any]:
        """Every note of a book."""
        return {"notes": books.get(book, [])}

    @server.tool()
    def drop_book(book: str) -> str:
        """Forget a book."""
        books.pop(book, None)
        return "dropped"

    return server


if __name__ == "__main__":
    build(int(sys.argv[1])).run(transport="streamable-http")
