"""The answer stage for one question: search its memory, read, answer; scorer-side it also
records whether what the reader saw held an evidence turn (for failure attribution)."""

from __future__ import annotations

import time

from lme_bench.backends.protocol import Capability
from lme_bench.backends.recall import MemorySearch, usage_since
from lme_bench.common.secrets import redact_secrets
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.dataset.views import make_view
from lme_bench.metrics.ranking_metrics import is_evidence
from lme_bench.providers.calls import CallAccount, ChatCall, CountedModel, set_call_columns
from lme_bench.providers.factory import parse_model
from lme_bench.qa.panel import QaPanel
from lme_bench.qa.reader import load_qa_prompts
from lme_bench.qa.strategies import Answerer
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.retrieval.official_ids import has_evidence_turns, official_rankings


async def answer_question(
    ref: QuestionRef, memory_id: str, qa: QaPanel, reader: ChatCall | None = None
) -> HypothesisRow:
    """Answer from memory, with the run's QA model, prompts and memory system (built once per
    run: lme_bench.qa.panel). Model failures after retries become a row with status "error".
    `reader` stands in for the QA model's calls (a batch job's replies)."""
    settings = qa.settings
    instance = ref.load()
    view, keys = make_view(instance)
    model: ChatCall = qa.model if reader is None else reader
    account = CallAccount()
    row = _row(ref, settings, qa.spec.label, qa.prompts.version)
    started = time.perf_counter()
    system = qa.memory.open()
    try:
        counted = CountedModel(model, qa.policy, account, qa.limiter)
        search = MemorySearch(system, view.question_date)
        answerer = Answerer(search, counted, qa.prompts, settings.qa)
        before = system.usage()
        answer = await answerer.answer(view, memory_id)
        spent = usage_since(system, before)
        row.memory_embedding_calls, row.memory_model_calls = (
            spent.embedding_calls,
            spent.model_calls,
        )
    except Exception as exc:
        if not _model_fault(exc):
            raise  # memory or code faults fail the task (and may be retried)
        row.status, row.error = "error", redact_secrets(f"{type(exc).__name__}: {exc}", settings)
    else:
        row.hypothesis = answer.hypothesis
        row.queries, row.searches = answer.queries, answer.searches
        row.entries_shown, row.context_chars = len(answer.shown), answer.context_chars
        keeps_turns = Capability.TURN_PROVENANCE in system.capabilities
        turn_ids, _ = official_rankings(instance, keys, answer.shown, expand=not keeps_turns)
        has_evidence = has_evidence_turns(instance)
        # unknown where what the reader saw maps to no turn: context-only ingestion (a context
        # document is all there is), or entries shown none of which maps to a turn
        unmappable = settings.ingest.mode == "context-only" or (answer.shown and not turn_ids)
        if has_evidence and not instance.is_abstention and not unmappable:
            row.evidence_in_context = any(is_evidence(t) for t in turn_ids)
    finally:
        await system.close()
    row.llm_calls = account.calls
    set_call_columns(row, account)
    row.input_tokens, row.output_tokens = account.input_tokens, account.output_tokens
    row.seconds = time.perf_counter() - started
    return row


def _model_fault(error: BaseException) -> bool:
    from lme_bench.providers.faults import classify

    return classify(error)[0] is not None or type(error).__module__.startswith(
        ("openai", "botocore", "langchain")
    )


def unanswered_row(ref: QuestionRef, settings: Settings, error: str | None = None) -> HypothesisRow:
    """The row of a question whose answer could not be made (`error`), or, without one, of a
    question before its answer."""
    qa_model = parse_model("qa", settings.models.qa, settings).label if settings.models.qa else ""
    return _row(ref, settings, qa_model, load_qa_prompts(settings.qa.prompts_dir).version, error)


def _row(
    ref: QuestionRef,
    settings: Settings,
    qa_model: str,
    prompt_version: str,
    error: str | None = None,
) -> HypothesisRow:
    return HypothesisRow(
        question_id=ref.question_id,
        question_type=ref.question_type,
        is_abstention=ref.is_abstention,
        hypothesis=None,
        strategy=settings.qa.strategy,
        qa_model=qa_model,
        prompt_version=prompt_version,
        top_ke=settings.qa.top_ke,
        top_kc=settings.qa.top_kc,
        status="error" if error else "ok",
        error=error,
    )
