"""Turn free text into a safe FTS5 query: quoted terms OR-ed together, common words dropped."""

from __future__ import annotations

import re

from lme_bench.embeddings.stopwords import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str, limit: int = 64) -> list[str]:
    """Distinct lowercase terms of `text` in order, stopwords removed (all kept if none remain)."""
    words = [w.lower() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))[:limit]


def fts_or_query(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
