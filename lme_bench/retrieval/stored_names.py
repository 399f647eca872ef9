"""Whether a memory system's hits name sessions and turns it was given, checked in every run.

A hit that names its session (or turn) by the system's own fields is checked against what the
question's memory was given: the session key must be one of the haystack's, the turn index one
of that session's turns, and a hit whose text holds stored turns verbatim (found by their first
`PROBE` characters) must hold one of the session (or the turn) it names. A hit that fails
names a session (turn) that never stored it: a key never ingested, a turn its session does not
have, or another session's text under this session's key (keys shifted by one). Hits whose
text holds no stored turn (rewritten notes, extracted facts) are checked by their key and turn
index alone.

A run whose share of such hits is above `UNSTORED_SHARE_LIMIT` at a granularity says its
provenance is unverified there (lme_bench.report); each row counts its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lme_bench.backends.protocol import Hit
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import SessionKeyMap

UNSTORED_SHARE_LIMIT = 0.02  # above this share of hits naming what was never stored: unverified
PROBE = 24  # characters of normalized text that identify a stored turn inside a hit
SHOWN_KEYS = 3  # unknown keys named in a row's reason
_SPACE = re.compile(r"\s+")

Place = tuple[int, int]  # (session position, turn index)


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


class StoredText:
    """The question's turns as stored, to find which turns a hit's text holds verbatim."""

    def __init__(self, instance: Instance) -> None:
        self.turns: dict[Place, str] = {}
        self.by_probe: dict[str, list[Place]] = {}
        for position, session in enumerate(instance.haystack_sessions):
            for index, turn in enumerate(session):
                text = _normal(turn.content)
                if len(text) < PROBE:
                    continue  # too short to tell one turn from another
                self.turns[position, index] = text
                self.by_probe.setdefault(text[:PROBE], []).append((position, index))

    def holds(self, text: str, place: Place) -> bool:
        """Whether `text` (normalized) holds the turn at `place`, or lies within it."""
        turn = self.turns.get(place)
        return turn is not None and (turn[:PROBE] in text or text[:PROBE] in turn)

    def held(self, text: str) -> set[Place]:
        """Every stored turn whose start `text` holds (a turn, a session, a window of turns, a
        turn's first chunk). One probe lookup per word of the hit, however large the memory."""
        found: set[Place] = set()
        for at in (0, *(m.end() for m in _SPACE.finditer(text))):
            found.update(self.by_probe.get(text[at : at + PROBE], ()))
        return found


@dataclass(frozen=True, slots=True)
class NameCheck:
    """One ranking's hits that name a session (or turn) by the system's own fields, and those
    of them that name one never stored, by kind."""

    named: int = 0
    unknown_keys: tuple[str, ...] = ()  # one per hit naming a key never ingested
    past_end: int = 0  # hits naming a turn index their session does not have
    other_text: int = 0  # hits holding another session's (turn's) text than the one named

    @property
    def unstored(self) -> int:
        return len(self.unknown_keys) + self.past_end + self.other_text

    def reason(self, granularity: str) -> str | None:
        """Why the hits' names cannot be trusted, in words (None: every name checks out)."""
        if not self.unstored:
            return None
        kinds = []
        if self.unknown_keys:
            shown = sorted(set(self.unknown_keys))
            more = " …" if len(shown) > SHOWN_KEYS else ""
            keys = ", ".join(repr(k) for k in shown[:SHOWN_KEYS]) + more
            kinds.append(f"{len(self.unknown_keys)} by a session key never ingested ({keys})")
        if self.past_end:
            kinds.append(f"{self.past_end} by a turn index its session does not have")
        if self.other_text:
            kinds.append(f"{self.other_text} holding the text of another {granularity}")
        which = (
            "every hit names"
            if self.unstored == self.named
            else f"{self.unstored} of {self.named} hits name"
        )
        return f"{which} a {granularity} never stored: " + "; ".join(kinds)


def _elsewhere(stored: StoredText, text: str, indexes: list[int], position: int) -> bool:
    """`text` holds none of the named turns (`indexes` of the session at `position`) but holds
    some other stored turn."""
    if any(stored.holds(text, (position, i)) for i in indexes):
        return False
    return bool(stored.held(text))


def check_names(
    instance: Instance,
    keys: SessionKeyMap,
    hits: Sequence[Hit],
    granularity: str,
    stored: StoredText | None = None,
) -> NameCheck:
    """Check the session keys (`granularity` "session") or the turns ("turn") the hits name."""
    if not hits:
        return NameCheck()
    stored = stored or StoredText(instance)
    named, unknown, past_end, other = 0, [], 0, 0
    for hit in hits:
        if hit.session_key is None or (granularity == "turn" and hit.turn_index is None):
            continue  # names nothing to check at this granularity
        named += 1
        position = keys.position(hit.session_key)
        if position is None:
            unknown.append(hit.session_key)
            continue
        session = instance.haystack_sessions[position]
        text = _normal(hit.text)
        if granularity == "turn":
            index = hit.turn_index or 0  # not None: checked above
            if not 0 <= index < len(session):
                past_end += 1
            elif (position, index) in stored.turns and _elsewhere(stored, text, [index], position):
                other += 1
            continue
        checkable = [i for i in range(len(session)) if (position, i) in stored.turns]
        if checkable and _elsewhere(stored, text, checkable, position):
            other += 1
    return NameCheck(named, tuple(unknown), past_end, other)


def every_hit_unstored(granularity: str) -> str:
    """Why no hit maps, when every hit names a session (turn) never stored (the same words
    for every such row: the row's unstored_reason has the counts)."""
    return (
        f"every hit names a {granularity} never stored (a session key never ingested, or"
        f" another {granularity}'s text)"
    )


def unstored_share(named: int, unstored: int) -> float:
    return unstored / named if named else 0.0


def unverified(named: int, unstored: int) -> bool:
    """Too many hits name sessions (turns) never stored for the names to be trusted."""
    return unstored_share(named, unstored) > UNSTORED_SHARE_LIMIT
