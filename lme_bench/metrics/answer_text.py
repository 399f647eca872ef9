"""Answer text normalised for matching: NFKC, lower case, no punctuation or articles."""

from __future__ import annotations

import re
import unicodedata

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    text = re.sub(r"[^\w\s']", " ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())
