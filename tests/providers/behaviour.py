"""How a fake model server answers a request: the delays, lengths and faults of a real one.

A `Behaviour` is set for a whole server or for one request. Replies are made of tokens (a word
with the whitespace before it); a request's output cap cuts the reply at that many tokens, as a
real server does, and the usage it reports counts the tokens it generated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Fault = Literal["drop", "stall"]

_SENTENCE = "the user said they moved to Austin last spring and now walk their dog by the river"


@dataclass(frozen=True, slots=True)
class Behaviour:
    """latency_s: wait before the reply starts (time to first byte).
    length: generate a reply of this many tokens instead of the scripted text.
    tokens_per_s: generation speed; None generates at once.
    status: answer this HTTP error instead (429, 500, 502, 503), with the provider's error body.
    fault: "drop" closes the connection, "stall" stops sending but keeps the socket open until
      the server stops (a client's read timeout is the only way out).
    after_tokens: where `fault` (or, in a stream, `status`) strikes: after this many tokens of
      the reply were sent; 0 is before the status line. A plain (not streamed) reply is
      generated in full, then cut in the middle of its body; in a stream, a status becomes the
      provider's error event."""

    latency_s: float = 0.0
    length: int | None = None
    tokens_per_s: float | None = None
    status: int | None = None
    fault: Fault | None = None
    after_tokens: int = 0

    def __post_init__(self) -> None:
        if self.status is not None and self.fault is not None:
            raise ValueError("a reply either answers an error status or fails, not both")
        if self.after_tokens < 0 or (self.length is not None and self.length < 0):
            raise ValueError("token counts are never negative")

    @property
    def seconds_per_token(self) -> float:
        return 1.0 / self.tokens_per_s if self.tokens_per_s else 0.0

    @property
    def fails_midway(self) -> bool:
        """Whether the reply starts (status line, headers, some tokens) before its fault."""
        return self.after_tokens > 0 and (self.fault is not None or self.status is not None)


def split_tokens(text: str) -> list[str]:
    """The tokens of a text: each word with the whitespace before it (joined, the text again)."""
    tokens = re.findall(r"\s*\S+", text)
    trailing = text[len("".join(tokens)) :]
    if trailing and tokens:
        tokens[-1] += trailing
    return tokens or ([text] if text else [])


def long_reply(length: int) -> list[str]:
    """`length` tokens of plausible text."""
    words = _SENTENCE.split(" ")
    return [("" if i == 0 else " ") + words[i % len(words)] for i in range(length)]


@dataclass(frozen=True, slots=True)
class Generation:
    """What the server generates for one request: its tokens, and whether the cap cut it."""

    tokens: tuple[str, ...]
    capped: bool

    @property
    def text(self) -> str:
        return "".join(self.tokens)


def generate(scripted: str, behaviour: Behaviour, cap: int | None) -> Generation:
    """The scripted text, or `behaviour.length` generated tokens, cut at the request's cap."""
    tokens = (
        long_reply(behaviour.length) if behaviour.length is not None else split_tokens(scripted)
    )
    if cap is not None and len(tokens) > cap:
        return Generation(tuple(tokens[:cap]), capped=True)
    return Generation(tuple(tokens), capped=False)
