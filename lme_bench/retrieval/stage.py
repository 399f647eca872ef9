"""The retrieval stage of one question: search its memory with the question text, then score
the ranking against the gold evidence (lme_bench.retrieval.official_ids)."""

from __future__ import annotations

from lme_bench.backends.registry import open_backend
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.dataset.views import session_keys
from lme_bench.ingest.question import IngestOutcome
from lme_bench.retrieval.official_ids import RetrievalRow, evaluate_retrieval


async def evaluate_question(
    ref: QuestionRef, outcome: IngestOutcome, settings: Settings
) -> list[RetrievalRow]:
    """Search the question's memory with the question text and score the ranking."""
    instance = ref.load()
    backend = open_backend(settings)
    try:
        await backend.await_consistency(outcome.memory_id)
        found = await backend.search(
            outcome.memory_id, instance.question, top_ke=settings.retrieval.top_k, top_kc=0
        )
    finally:
        await backend.close()
    return evaluate_retrieval(instance, session_keys(instance), found.entries)
