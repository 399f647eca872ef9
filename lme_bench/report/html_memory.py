"""The run report's view of what a question's memory held after ingestion (an excerpt read
back from the memory system), and the banner for memories whose context document the memory
agent never changed after the first session. Every text is escaped."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from lme_bench.report.labels import count

NOT_AVAILABLE = "not available from this backend (it has no way to list what a memory holds)"
NOT_RECORDED = "not recorded (no ingestion of this run read it)"
UNREADABLE = "could not be read from the memory system (see the log)"


def memory_held(excerpt: Mapping[str, Any] | None, recorded: bool) -> str:
    """The card's "memory holds" value: the context document's start and the newest entries."""
    if not recorded:
        return f'<span class="none">{NOT_RECORDED}</span>'
    if excerpt is None:
        return f'<span class="none">{UNREADABLE}</span>'
    if not excerpt.get("available"):
        return f'<span class="none">{NOT_AVAILABLE}</span>'
    context, entries = excerpt.get("context"), excerpt.get("entries") or []
    if not context and not excerpt.get("entry_count"):
        return '<span class="none">nothing: no context document, no entry</span>'
    parts = []
    chars = count(excerpt.get("context_chars", 0))
    if context:
        parts.append(
            f"<div>context document ({chars} characters):</div>"
            f'<pre class="memory">{escape(context)}</pre>'
        )
    else:
        parts.append('<div class="none">no context document</div>')
    total = excerpt.get("entry_count", 0)
    if entries:
        items = "".join(f"<li>{escape(e)}</li>" for e in entries)
        parts.append(
            f"<div>{count(total)} entries; the newest {len(entries)}:</div><ol>{items}</ol>"
        )
    else:
        parts.append('<div class="none">no entry</div>')
    return "".join(parts)


def context_unchanged_text(health: Mapping[str, Any]) -> str:
    """One sentence naming the questions whose context never changed ("" when none)."""
    part = health.get("context_unchanged") or {}
    if not part.get("count"):
        return ""
    ids = part.get("question_ids") or []
    shown = ", ".join(ids[:20]) + (" …" if len(ids) > 20 else "")
    return (
        f"context document never changed after the first session for {part['count']} of"
        f" {health.get('checked', 0)} questions ({shown})"
    )
