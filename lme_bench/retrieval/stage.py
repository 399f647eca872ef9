"""The retrieval stage of one question: search its memory with the question text, then score
the ranking against the gold evidence (lme_bench.retrieval.official_ids); not applicable where
no hit can map to the haystack (lme_bench.retrieval.provenance)."""

from __future__ import annotations

from dataclasses import replace

from lme_bench.backends.configured import ConfiguredBackend, configured_backend
from lme_bench.backends.recall import MemorySearch, usage_since
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.dataset.views import session_keys
from lme_bench.ingest.question import IngestOutcome
from lme_bench.retrieval.official_ids import RetrievalRow, evaluate_retrieval
from lme_bench.retrieval.provenance import CONTEXT_ONLY, CONTEXT_ONLY_HIT, provenance_of


async def evaluate_question(
    ref: QuestionRef,
    outcome: IngestOutcome,
    settings: Settings,
    memory: ConfiguredBackend | None = None,
) -> list[RetrievalRow]:
    """Search the question's memory with the question text and score the ranking; `memory`
    is the run's memory system as configured (derived from `settings` when not given)."""
    instance = ref.load()
    system = (memory or configured_backend(settings)).open()
    top_k = settings.retrieval.top_k
    try:
        search = MemorySearch(system, instance.question_date)
        await search.wait_until_ready(outcome.memory_id)
        before = system.usage()
        found = await search.search(outcome.memory_id, instance.question, k=top_k)
        spent = usage_since(system, before)
        provenance = provenance_of(system, settings.retrieval.attribute)
    finally:
        await system.close()
    keys, hits = session_keys(instance), found.hits
    unmappable = None
    if settings.ingest.mode == "context-only":
        unmappable = CONTEXT_ONLY
    elif not hits and found.latest_context:
        unmappable = CONTEXT_ONLY_HIT
    rows = evaluate_retrieval(
        instance,
        keys,
        hits,
        provenance,
        requested=top_k,
        depth=len(hits),
        unmappable=unmappable,
    )
    return [
        replace(
            row,
            search_seconds=found.seconds,
            search_wait_seconds=found.wait_seconds,
            search_embedding_calls=spent.embedding_calls,
            search_model_calls=spent.model_calls,
        )
        for row in rows
    ]
