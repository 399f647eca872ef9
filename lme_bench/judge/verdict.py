"""Reading a judge's reply: correct when it says yes, as the official script decides."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_YES = re.compile(r"\byes\b")
_NO = re.compile(r"\bno\b")


@dataclass(frozen=True, slots=True)
class Verdict:
    status: Literal["ok", "judge-error"]
    label: bool | None
    raw: str


def read_verdict(reply: str | None) -> Verdict:
    """The official rule is `'yes' in reply.lower()`. A reply with neither a yes nor a no word
    (empty, a refusal, garbage) is a judge error, never counted as a wrong answer."""
    raw = reply or ""
    text = raw.lower()
    if _YES.search(text) is None and _NO.search(text) is None:
        return Verdict("judge-error", None, raw)
    return Verdict("ok", "yes" in text, raw)
