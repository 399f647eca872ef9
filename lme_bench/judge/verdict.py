"""Reading a judge's reply by the official rule: correct when the lowercased reply holds `yes`.

Every reply gets a label, as in the official evaluation (a reply without `yes` — a `no`, an empty
reply, a refusal, garbage — is a wrong answer). `readable` says whether the reply held a yes or
no word at all, for the second, labelled figure "over readable verdicts only".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_YES_OR_NO = re.compile(r"\b(yes|no)\b")


@dataclass(frozen=True, slots=True)
class Verdict:
    label: bool  # the official label: 'yes' in reply.lower()
    readable: bool  # the reply holds a yes or a no word
    raw: str


def read_verdict(reply: str | None) -> Verdict:
    raw = reply or ""
    text = raw.strip().lower()
    return Verdict(label="yes" in text, readable=_YES_OR_NO.search(text) is not None, raw=raw)
