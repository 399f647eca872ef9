"""Turn free text into a safe FTS5 query: quoted terms OR-ed together, common words dropped."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

# Words too common to help BM25 rank anything; dropping them also keeps posting lists short.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def query_terms(text: str, limit: int = 64) -> list[str]:
    """Distinct lowercase terms of `text` in order, stopwords removed (all kept if none remain)."""
    words = [w.lower() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))[:limit]


def fts_or_query(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
