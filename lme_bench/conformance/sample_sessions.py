"""The sessions the conformance suite ingests: each has a few words no other session has, so a
search for them tells which session a hit came from."""

from __future__ import annotations

from lme_bench.backends.protocol import Session, Turn


def _session(key: str, date: str, *pairs: tuple[str, str]) -> Session:
    turns: list[Turn] = []
    for user, assistant in pairs:
        turns += [Turn(len(turns), "user", user), Turn(len(turns) + 1, "assistant", assistant)]
    return Session(key=key, date=date, turns=tuple(turns))


GREYHOUND = _session(
    "s-7f3a",
    "2023/05/20 (Sat) 02:21",
    ("I adopted a greyhound named Pixel last spring.", "Greyhounds are gentle companions."),
    ("Pixel loves sleeping on the orange sofa.", "That sounds cosy."),
)
LISBON = _session(
    "s-91c2",
    "2023/06/02 (Fri) 18:05",
    ("My sister Marguerite moved to Lisbon for a cartography job.", "Lisbon is lovely."),
    ("She sends me postcards of tiled facades.", "What a nice habit."),
)
KAYAK = _session(
    "s-c4d8",
    "2023/07/14 (Fri) 09:40",
    ("I bought a turquoise kayak from a shop in Bergen.", "Enjoy paddling!"),
    ("The kayak weighs twenty kilograms.", "Quite light for a kayak."),
)
VIOLIN = _session(
    "s-e602",
    "2023/08/01 (Tue) 20:15",
    ("I started violin lessons with a teacher called Ottoline.", "Good luck with them."),
    ("Ottoline says my bow hold is improving.", "Practice pays off."),
)
ALL = (GREYHOUND, LISBON, KAYAK, VIOLIN)
QUESTION_DATE = "2023/09/01 (Fri) 12:00"
