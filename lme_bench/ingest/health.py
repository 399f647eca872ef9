"""Whether a question's memory holds anything once its ingestion is done: its ingest health.

- `ok`: the memory holds something; `empty`: it holds nothing, so no answer can come from it;
  `unchecked`: not looked at (rows written before the check existed).
- `context-unchanged`: the memory agent stored a context document in the first session and
  never changed it after, over two or more sessions (e.g. a small model that writes "The
  complete updated context document has been sent to the user" every time): the memory holds
  something, but not what the later sessions said.
- A memory with an entry surface (Capability.ENTRIES) is empty when it holds no entry and no
  context document: raw ingestion that stored entries and context-only ingestion that stored a
  context are healthy, an agentic one that stored neither is not.
- Any other system is asked through the protocol, which has no count of what a memory holds:
  after `wait_until_ready` it is searched with text it was given (`probe_queries`: the first
  user message of its first, middle and last sessions, then the longest word of each). The
  protocol asks for hits without a score threshold, so a memory holding anything answers one
  of them; a memory that answers none is reported empty. For a system whose search finds only
  text holding the whole query as it is, `empty` means "found nothing with its own words". A
  probe search that fails leaves the memory `unchecked`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from lme_bench.backends.protocol import MemorySystem
from lme_bench.dataset.views import QuestionView
from lme_bench.entries.capability import Entries
from lme_bench.ingest.records import SessionRecord

HEALTHY = "ok"
EMPTY = "empty"
CONTEXT_UNCHANGED = "context-unchanged"
UNCHECKED = "unchecked"
PROBE_CHARS = 200  # of a message searched as it is
_WORD = re.compile(r"\w{4,}")
log = logging.getLogger(__name__)


def probe_queries(view: QuestionView) -> list[str]:
    """Searches that find something in any memory built from `view`'s sessions: whole
    messages first (as a lexical or vector search matches them), then single words (as a
    search for the query as a substring does)."""
    count = len(view.sessions)
    picked = sorted({0, count // 2, count - 1}) if count else []
    messages = []
    for position in picked:
        turns = view.sessions[position].turns
        said = next((t.content for t in turns if t.role == "user" and t.content.strip()), None)
        said = said or next((t.content for t in turns if t.content.strip()), None)
        if said is not None:
            messages.append(said.strip()[:PROBE_CHARS])
    words = [max(_WORD.findall(m), key=len, default="") for m in messages]
    return list(dict.fromkeys(q for q in [*messages, *words] if q))


async def entries_health(entries: Entries, memory_id: str, count: int) -> str:
    """`count`: the entries the memory was counted to hold after its ingestion."""
    if count:
        return HEALTHY
    return HEALTHY if await entries.get_context(memory_id) else EMPTY


async def searched_health(system: MemorySystem, memory_id: str, view: QuestionView) -> str:
    """A system without an entry surface: healthy once a probe search finds a hit. A search
    that fails leaves the memory unchecked, and the ingestion stands: the retrieval and answer
    stages search it again and report the failure as theirs."""
    await system.wait_until_ready(memory_id)
    for query in probe_queries(view):
        try:
            found = await system.search(memory_id, query, question_date=view.question_date, k=1)
        except Exception as error:  # the backend's own fault, reported where it searches next
            log.warning(
                "memory %s: the health probe's search failed (%s: %s); left unchecked",
                memory_id,
                type(error).__name__,
                error,
            )
            return UNCHECKED
        if found:
            return HEALTHY
    return EMPTY


def context_health(health: str, records: Sequence[SessionRecord]) -> str:
    """An agent ingestion's health given what each session stored: `context-unchanged` when a
    healthy memory's sessions after the first changed its context document in none of them
    (a session stores its context only when it differs from the one it started from)."""
    later = [r for r in records if r.session_index > 0]
    if health != HEALTHY or not later or any(r.context_chars for r in later):
        return health
    return CONTEXT_UNCHANGED
