"""Reading a BEAM `chat.json`: validated, streamed batch by batch into `Session`s.

Two layouts occur: a JSON array of batches (100K, 500K, 1M and each 10M plan's own file), and
the 10M tier's array of plans, each an object `{"plan-N": [batches]}`. A batch is
`{"batch_number", "time_anchor", "turns"}`; its `turns` is a list of exchanges, each a list of
messages `{"role", "id", "content", ...}`; the batch's date is the `time_anchor` its first
message carries (`"March-15-2024"`; the batch-level `time_anchor` is null in the published
files, and used when set). A batch becomes one session, its messages in order. Generation
metadata on messages (`question_type`, `index`) is dropped: the role, the text and the
message's `id` (which probing questions name as their evidence) are kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import ijson

from lme_bench.builtin_benchmarks.beam.errors import BeamFormatError
from lme_bench.builtin_benchmarks.beam.models import TIERS, Conversation, Session, Turn

ANCHOR_FORMATS = ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d", "%B %d, %Y")
ROLES = ("user", "assistant")


def conversation_id_of(path: Path, levels_up: int = 1) -> str | None:
    """`<tier>-<n>` from a path `.../<tier>/<n>/...`, the chat folder `levels_up` above the file;
    None when the folders are not named so."""
    chat_dir = Path(path).resolve().parents[levels_up - 1]
    tier = chat_dir.parent.name
    return f"{tier}-{chat_dir.name}" if tier in TIERS and chat_dir.name.isdigit() else None


def parse_anchor(text: str) -> date:
    """A BEAM time anchor (`March-15-2024`) as a date; ValueError naming the text otherwise."""
    for form in ANCHOR_FORMATS:
        try:
            return datetime.strptime(text.strip(), form).date()
        except ValueError:
            continue
    raise ValueError(f"unparsable time anchor {text!r} (expected like 'March-15-2024')")


class _Reader:
    def __init__(self, path: Path, chat: str) -> None:
        self.path = path
        self.chat = chat

    def error(self, problem: str, field: str | None = None) -> BeamFormatError:
        return BeamFormatError(self.path, problem, chat=self.chat, field=field)

    def turn(self, raw: Any, where: str) -> tuple[Turn, Any]:
        if not isinstance(raw, dict):
            raise self.error(f"expected a message object, got {type(raw).__name__}", where)
        role = raw.get("role")
        if role not in ROLES:
            shown = "missing" if role is None else repr(role)
            raise self.error(f"role {shown}, expected 'user' or 'assistant'", f"{where}.role")
        content = raw.get("content")
        if not isinstance(content, str):
            shown = "missing" if content is None else f"a {type(content).__name__}"
            raise self.error(f"content is {shown}, expected text", f"{where}.content")
        number = raw.get("id")
        message_id = number if isinstance(number, int) and not isinstance(number, bool) else None
        return Turn(role=role, text=content, message_id=message_id), raw.get("time_anchor")

    def session(self, raw: Any, where: str, index: int) -> Session:
        if not isinstance(raw, dict):
            raise self.error(f"expected a batch object, got {type(raw).__name__}", where)
        exchanges = raw.get("turns")
        if not isinstance(exchanges, list):
            shown = "missing" if exchanges is None else f"a {type(exchanges).__name__}"
            raise self.error(f"turns is {shown}, expected a list of exchanges", f"{where}.turns")
        anchor = raw.get("time_anchor")
        anchor_field = f"{where}.time_anchor"
        turns: list[Turn] = []
        for e, exchange in enumerate(exchanges):
            if not isinstance(exchange, list):
                problem = f"expected a list of messages, got {type(exchange).__name__}"
                raise self.error(problem, f"{where}.turns[{e}]")
            for m, message in enumerate(exchange):
                at = f"{where}.turns[{e}][{m}]"
                turn, message_anchor = self.turn(message, at)
                if anchor is None and message_anchor is not None:
                    anchor, anchor_field = message_anchor, f"{at}.time_anchor"
                turns.append(turn)
        if anchor is None:
            raise self.error("no time anchor on the batch or any of its messages", where)
        if not isinstance(anchor, str):
            raise self.error(f"expected text, got {type(anchor).__name__}", anchor_field)
        try:
            when = parse_anchor(anchor)
        except ValueError as exc:
            raise self.error(str(exc), anchor_field) from None
        return Session(index=index, date=when, turns=tuple(turns))

    def batches(self, item: Any, position: int) -> Iterator[tuple[str, Any]]:
        """The batches of one top-level item: itself, or a 10M plan's list."""
        if isinstance(item, dict) and ("turns" in item or "batch_number" in item):
            yield f"batch[{position}]", item
            return
        if isinstance(item, dict) and len(item) == 1:
            ((name, batches),) = item.items()
            if isinstance(batches, list):
                for b, batch in enumerate(batches):
                    yield f"[{position}].{name}[{b}]", batch
                return
        raise self.error(
            "expected a batch (an object with 'turns') or a 10M plan ({'plan-N': [batches]})",
            f"[{position}]",
        )


def iter_sessions(path: Path, conversation_id: str | None = None) -> Iterator[Session]:
    """Each batch of the chat as a session, in file order, validated as it is read."""
    path = Path(path)
    chat = conversation_id or conversation_id_of(path) or path.parent.name
    reader = _Reader(path, chat)
    if not path.is_file():
        raise reader.error("not a file" if path.exists() else "no such file")
    index = 0
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()[:1]
        if head != b"[":
            raise reader.error("expected a JSON array of batches" if head else "the file is empty")
        handle.seek(0)
        try:
            for position, item in enumerate(ijson.items(handle, "item", use_float=True)):
                for where, batch in reader.batches(item, position):
                    yield reader.session(batch, where, index)
                    index += 1
        except ijson.JSONError as exc:
            after = f"after batch #{index - 1}" if index else "in the first batch"
            first_line = str(exc).splitlines()[0] if str(exc) else "invalid JSON"
            raise reader.error(f"invalid JSON {after}: {first_line}") from None
        except UnicodeDecodeError:
            raise reader.error("not UTF-8 text; save the file as UTF-8") from None
    if index == 0:
        raise reader.error("the chat holds no batches")


def read_conversation(path: Path, conversation_id: str | None = None) -> Conversation:
    """The whole chat; its id is `conversation_id`, else `<tier>-<n>` from the folders
    (`chats/100K/1/chat.json` is `100K-1`)."""
    path = Path(path)
    chat = conversation_id or conversation_id_of(path)
    if chat is None:
        raise BeamFormatError(
            path,
            "cannot tell the chat from the path (expected .../<tier>/<n>/chat.json); give"
            " its conversation id",
        )
    return Conversation(conversation_id=chat, sessions=tuple(iter_sessions(path, chat)))
