"""How a memory system's hits map back to the haystack, per granularity.

- exact: from the system's own fields (the session key, and the turn index where the system
  keeps turns), set by the backend at ingestion;
- attributed: matched by text, each hit to the haystack user turn sharing most of its words
  (within the hit's own session when that is exact). Systems that rewrite what they store get
  figures this way, reported apart and never mixed with exact ones;
- none: no mapping (`[retrieval] attribute = false`): the rows are marked not applicable
  instead of scoring 0.

Rows are also not applicable, with the reason, wherever hits cannot be mapped: context-only
ingestion (the memory holds context documents, no turn), a context document as the memory's
only hit, or hits none of which maps to the haystack. A memory that returns no hit at all
is scored 0: it was searched and found nothing (an empty memory is named by ingest health).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from lme_bench.backends.protocol import Capability, Hit, MemorySystem
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import SessionKeyMap

Provenance = Literal["exact", "attributed", "none"]
MIN_SHARE = 0.5  # an attributed hit shares at least half its words with the turn it maps to
_WORD = re.compile(r"[a-z0-9]{3,}")


@dataclass(frozen=True, slots=True)
class RankingProvenance:
    session: Provenance = "exact"
    turn: Provenance = "exact"


EXACT = RankingProvenance()


CONTEXT_ONLY = (
    "context-only ingestion: the memory holds context documents, which map to no turn of the"
    " haystack"
)
CONTEXT_ONLY_HIT = "the memory's only hit is its context document, which maps to no turn"
_UNIT = {"session": "session key", "turn": "turn index"}


def no_provenance_reason(granularity: str) -> str:
    return f"the system's hits carry no {_UNIT[granularity]} and [retrieval] attribute = false"


def unmapped_reason(granularity: str, provenance: Provenance) -> str:
    """Why hits that were returned map to nothing at `granularity`."""
    if provenance == "attributed":
        return "no hit's text matches a user turn of the haystack"
    return f"none of the hits names a {granularity} of the haystack by its {_UNIT[granularity]}"


def provenance_of(system: MemorySystem, attribute: bool) -> RankingProvenance:
    otherwise: Provenance = "attributed" if attribute else "none"
    caps = system.capabilities
    session: Provenance = "exact" if Capability.PROVENANCE in caps else otherwise
    turn: Provenance = "exact" if Capability.TURN_PROVENANCE in caps else otherwise
    return RankingProvenance(session, turn)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class TurnIndex:
    """The question's user turns by word, to find the turn a hit's text came from."""

    def __init__(self, instance: Instance, keys: SessionKeyMap) -> None:
        self.turns: list[tuple[int, int, set[str]]] = []  # (session position, turn index, words)
        self.by_word: dict[str, list[int]] = defaultdict(list)
        for position, session in enumerate(instance.haystack_sessions):
            for index, turn in enumerate(session):
                if turn.role != "user":
                    continue
                words = _words(turn.content)
                for word in words:
                    self.by_word[word].append(len(self.turns))
                self.turns.append((position, index, words))
        self.keys = keys

    def best(self, text: str, position: int | None) -> tuple[int, int] | None:
        words = _words(text)
        if not words:
            return None
        shared: dict[int, int] = defaultdict(int)
        for word in words:
            for turn in self.by_word.get(word, ()):
                if position is None or self.turns[turn][0] == position:
                    shared[turn] += 1
        if not shared:
            return None
        turn = max(shared, key=lambda t: (shared[t], -t))
        if shared[turn] < MIN_SHARE * len(words):
            return None
        return self.turns[turn][0], self.turns[turn][1]


def attributed_hits(
    instance: Instance, keys: SessionKeyMap, hits: Sequence[Hit], *, within_session: bool
) -> list[Hit]:
    """The hits tagged with the session key and turn index their text matches; hits that match
    no turn are dropped from the ranking."""
    index = TurnIndex(instance, keys)
    tagged = []
    for hit in hits:
        position = keys.position(hit.session_key or "") if within_session else None
        if within_session and position is None:
            continue
        found = index.best(hit.text, position)
        if found is None:
            continue
        tagged.append(replace(hit, session_key=keys.key_at(found[0]), turn_index=found[1]))
    return tagged
