"""Cache keys of per-question work: what a stage's result depends on, hashed.

A key joins the stage, the question's content hash, that stage's settings (with the settings
of the providers its models come from), a hash of the stage's source and prompt files
(lme_bench.common.code_digest), and the scope: the run id (`[cache] scope = "run"`) or the memory
system's identity (`"shared"`: one ingestion reused across runs). Downstream keys also hash
what the stage was given (the ingestion that filled the memory, the hypothesis), so redoing a
stage redoes what follows.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict
from typing import Any

from lme_bench.backends.builtin_params import search_params
from lme_bench.common.code_digest import entry_code_digest
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.fingerprint import (
    digest,
    ingest_fingerprint,
    memory_identity,
    model_settings,
    provider_settings,
)
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.providers.retry import RETRY_COLUMNS
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.run.stage_table import stage_spec

# Bump when a stage's result type or meaning changes. 3: full rankings. 4: session records,
# hypotheses and scores count retries by cause (retries_throttled, _timeout, _connection,
# _server), and scores carry `readable`.
CACHE_FORMAT = "4"


def _search_settings(settings: Settings) -> dict[str, Any]:
    search = search_params(settings)  # the embedded store's; the defaults for another backend
    return {
        "search": search.search,
        "alpha": search.alpha,
        "embedding": settings.memory.embedding_model,
    }


def _judge_requests(settings: Settings) -> dict[str, Any]:
    """The request body of each judge not sent the official one (a reasoning model, Anthropic,
    Bedrock): a change to its family's rules is a change to what is judged. Judges sent the
    official body keep the keys they had before request shapes were recorded."""
    from lme_bench.judge.family_requests import judge_request_shapes

    kept_as_before = ("openai-official", "fake")
    shapes = {
        label: record
        for label, record in judge_request_shapes(settings).items()
        if record["family"] not in kept_as_before
    }
    return {"requests": shapes} if shapes else {}


def _stage_settings(stage: str, settings: Settings) -> dict[str, Any]:
    """What a stage's key hashes of the settings: its section (lme_bench.run.stage_table: all
    but the fields that change no result) with what else the stage reads."""
    from lme_bench.judge.prompts import judge_prompts
    from lme_bench.qa.reader import load_qa_prompts

    if stage == "ingest":  # the fingerprint holds the whole section (of a non-raw ingestion)
        return {"ingest": ingest_fingerprint(settings)}
    section = stage_spec(stage).section_settings(settings)
    if stage == "retrieval":
        return _search_settings(settings) | section
    if stage == "answer":
        return {
            "search": _search_settings(settings),
            "qa": section,
            "model": model_settings(settings, "qa"),
            "prompts": load_qa_prompts(settings.qa.prompts_dir).hashes,
        }
    judge = settings.judge
    return {
        "judge": section,
        "model": model_settings(settings, "judge"),
        "second_provider": provider_settings(settings, judge.second_model),
        "prompts": judge_prompts(judge).hashes,
    } | _judge_requests(settings)


def _benchmark_judging(ref: QuestionRef, settings: Settings) -> tuple[bool, Any]:
    """What the question's benchmark adds to its judge key (lme_bench.benchmarks.scoring_hooks):
    its own scorer's part, or its `judge_cache_part` (LoCoMo: the prompt its category is judged
    with and what stands for its correct answer); (False, None) when it adds nothing."""
    from lme_bench.benchmarks.scoring_hooks import rule_digest
    from lme_bench.judge.judge_input import benchmark_scoring, prompt_sha256
    from lme_bench.judge.prompts import judge_prompts

    scoring = benchmark_scoring(ref.benchmark, settings)
    if scoring.own_judge is not None:
        return True, scoring.own_judge.cache_part(settings)
    if scoring.score_answer is not None:
        return True, {"rule": rule_digest(scoring.score_answer)}
    if scoring.judge_cache_part is not None:
        prompts = judge_prompts(settings.judge)
        digest_of = functools.partial(prompt_sha256, prompts)
        return True, scoring.judge_cache_part(ref.question_type, digest_of)
    return False, None


def memory_scope(settings: Settings, run_id: str) -> str:
    """The run part of memory titles: the run id, or with a shared cache one name per
    ingestion settings, so every run with those settings finds the same memories."""
    if settings.cache.scope == "shared":
        return "shared-" + ingest_fingerprint(settings)[:12]
    return run_id


# How long an answer took, how often it was retried or timed out do not change what is judged.
_VOLATILE = frozenset({"seconds", "timeouts", *RETRY_COLUMNS})


def upstream_digest(value: Any) -> str:
    """What a stage was handed by the stage before it."""
    if isinstance(value, IngestOutcome):  # the memory and the ingestion that filled it
        return digest([value.memory_id, value.ingestion_id])
    if isinstance(value, MemoryLocation):  # named by its title, not by the store's own id
        return digest([value.question_id])
    if isinstance(value, HypothesisRow):
        return digest({k: v for k, v in asdict(value).items() if k not in _VOLATILE})
    raise TypeError(f"no cache digest for {type(value).__name__}")


def stage_key(
    stage: str,
    ref: QuestionRef,
    settings: Settings,
    scope: str,
    upstream: Any = None,
    ingestion_id: str | None = None,
) -> str | None:
    """The cache key of one question's stage, or None when caching is off. Judging also
    hashes the ingestion behind the answer (`ingestion_id`): a memory filled again redoes
    every stage after it, even where an answer comes out the same."""
    if settings.cache.scope == "off":
        return None
    # An ingestion is of the question's build: keyed by the build's content where questions
    # share one (so any of them finds it), by the question's for LongMemEval (a build each).
    shared_build = stage == "ingest" and bool(ref.build_sha256)
    stage_settings = _stage_settings(stage, settings)
    if stage == "judge":  # what its benchmark's judging adds, under the benchmark's name
        adds, part = _benchmark_judging(ref, settings)
        if adds:
            stage_settings[ref.benchmark] = part
    parts = {
        "stage": stage,
        "question": ref.build_sha256 if shared_build else ref.content_sha256,
        "settings": stage_settings,
        "code": [CACHE_FORMAT, entry_code_digest(stage_spec(stage).entry)],
        "scope": scope if settings.cache.scope == "run" else memory_identity(settings),
        "upstream": upstream_digest(upstream) if upstream is not None else None,
    }
    if ingestion_id is not None:
        parts["ingestion"] = ingestion_id
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", ref.build_id if shared_build else ref.question_id)[:40]
    return f"{stage}-{name}-{digest(parts)[:32]}"
