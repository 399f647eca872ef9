"""Words for the run's check of the names its hits carry (lme_bench.retrieval.stored_names):
the provenance label when too many hits name sessions or turns never stored, the line under
each retrieval table, and the warning for the top of summary.md, report.html and the run's
last line."""

from __future__ import annotations

from typing import Any

from lme_bench.report.labels import count, percent
from lme_bench.retrieval.official_ids import GRANULARITIES

NAMED = {"session": "sessions", "turn": "sessions or turns"}


def unverified_label(part: dict[str, Any], granularity: str) -> str | None:
    """The provenance label of a granularity whose names did not check out, else None."""
    names = part.get("names") or {}
    if not names.get("unverified"):
        return None
    return f"unverified: {percent(names['share'])} of hits name {NAMED[granularity]} never stored"


def name_check_line(part: dict[str, Any], granularity: str) -> str | None:
    """What the check found at one granularity, when some hit failed it."""
    names = part.get("names") or {}
    if not names.get("unstored_hits"):
        return None
    where = "over" if names["unverified"] else "within"
    found = (
        f"{count(names['unstored_hits'])} of {count(names['named_hits'])} hits"
        f" ({percent(names['share'])}, {where} the {percent(names['limit'])} limit) in"
        f" {count(len(names['questions']))} question{'s' * (len(names['questions']) != 1)}"
        f" name {NAMED[granularity]} never stored"
    )
    if names["unverified"]:
        return (
            f"Provenance unverified: {found}; the figures rest on names the memory system was"
            " never given (each row's unstored_reason in retrieval.parquet says which)."
        )
    return f"Provenance checked: {found}."


def unverified_text(summary: dict[str, Any]) -> str:
    """One sentence for the run's last line and the reports' top ("" when the names check
    out): the granularities whose provenance is unverified and why (once when both rest on
    the same hits)."""
    found = {
        g: names
        for g in GRANULARITIES
        if (names := (summary.get(g) or {}).get("names") or {}).get("unverified")
    }
    shown = [
        (g, names)
        for g, names in found.items()
        if not (g == "turn" and _counts(found.get("session")) == _counts(names))
    ]
    words = [
        f"{percent(names['share'])} of hits name {NAMED[g]} never stored ("
        + ("session and turn level" if g == "session" and len(shown) < len(found) else f"{g} level")
        + f", {count(names['unstored_hits'])} of {count(names['named_hits'])})"
        for g, names in shown
    ]
    return "provenance unverified: " + "; ".join(words) if words else ""


def _counts(names: dict[str, Any] | None) -> tuple[Any, ...] | None:
    return None if names is None else (names["named_hits"], names["unstored_hits"])


def unverified_markdown(summary: dict[str, Any]) -> str:
    """summary.md's warning under the title ("" when the names check out)."""
    text = unverified_text(summary)
    if not text:
        return ""
    return (
        f"**Provenance unverified**: {text.removeprefix('provenance unverified: ')}. The memory"
        " system's hits name sessions or turns it was never given (or another session's text"
        " under a session's key), so its retrieval figures are not exact; the retrieval"
        " sections below say where."
    )
