"""The reader: the prompt a QA model answers from, built from what memory search returned.

It gives `Current Date: <question_date>`, the latest context, the best matching context
snapshots, and the retrieved entries sorted by date with their dates (the session date the
harness tagged, else the entry's creation time), within a character budget.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from lme_bench.backends.protocol import Hit
from lme_bench.dataset.models import parse_date
from lme_bench.entries.models import ContextHit

PROMPT_NAMES = ("reader", "refine", "queries")


@dataclass(frozen=True, slots=True)
class QaPrompts:
    version: str
    texts: dict[str, str]

    @property
    def hashes(self) -> dict[str, str]:
        return {n: hashlib.sha256(t.encode()).hexdigest() for n, t in sorted(self.texts.items())}


def load_qa_prompts(folder: Path | None = None) -> QaPrompts:
    folder = folder or Path(str(resources.files("lme_bench.qa") / "prompts" / "v1"))
    texts = {}
    for name in PROMPT_NAMES:
        path = Path(folder) / f"{name}.txt"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: QA prompt missing")
        texts[name] = path.read_text(encoding="utf-8")
    version_file = Path(folder) / "VERSION"
    version = version_file.read_text().strip() if version_file.exists() else Path(folder).name
    return QaPrompts(version, texts)


@dataclass
class Gathered:
    """What the searches of one question returned, merged (entries best first)."""

    entries: list[Hit] = field(default_factory=list)
    contexts: list[ContextHit] = field(default_factory=list)
    latest_context: str | None = None
    queries: list[str] = field(default_factory=list)


def entry_moment(hit: Hit) -> datetime:
    """When the hit's conversation happened, for ordering (UTC, naive dates taken as UTC): the
    session date the harness tagged, else the system's own timestamp."""
    if not hit.date:
        return datetime.min.replace(tzinfo=UTC)
    try:
        return parse_date(hit.date).replace(tzinfo=UTC)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(hit.date.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _entry_line(hit: Hit) -> str:
    role = hit.role
    return f"[{hit.date or ''}] {role + ': ' if role else ''}{hit.text}"


def _within(lines: list[str], budget: int) -> tuple[str, int]:
    kept, used = [], 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept) or "(none)", len(kept)


def entries_text(entries: list[Hit], budget: int) -> tuple[str, list[Hit]]:
    """Entries best-first cut to the budget, then shown oldest first; (text, entries shown)."""
    shown: list[Hit] = []
    used = 0
    for hit in entries:
        line = _entry_line(hit)
        if used + len(line) + 1 > budget:
            break
        shown.append(hit)
        used += len(line) + 1
    ordered = sorted(shown, key=entry_moment)
    return "\n".join(_entry_line(hit) for hit in ordered) or "(none)", shown


def reader_prompt(
    prompts: QaPrompts, question: str, question_date: str, memory: Gathered, budget: int
) -> tuple[str, list[Hit]]:
    """(prompt, entries shown). Context gets up to half the budget, entries the rest."""
    latest = (memory.latest_context or "(none)")[: budget // 4]
    snapshots, _ = _within(
        [
            f"[{c.timestamp}] {c.context}"
            for c in memory.contexts
            if c.context != memory.latest_context
        ],
        budget // 4,
    )
    entries, shown = entries_text(memory.entries, budget - len(latest) - len(snapshots))
    text = (
        prompts.texts["reader"]
        .replace("{question_date}", question_date)
        .replace("{latest_context}", latest)
        .replace("{contexts}", snapshots)
        .replace("{entries}", entries)
        .replace("{question}", question)
    )
    return text, shown
