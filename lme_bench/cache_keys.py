"""Cache keys of per-question work: what a stage's result depends on, hashed.

A key joins the stage, the question's content hash, that stage's settings (with the settings
of the providers its models come from), a hash of the stage's source and prompt files
(lme_bench.code_digest), and the scope: the run id (`[cache] scope = "run"`) or the memory
system's identity (`"shared"`: one ingestion reused across runs). Downstream keys also hash
what the stage was given (the ingestion that filled the memory, the hypothesis), so redoing a
stage redoes what follows.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import asdict
from importlib import resources
from typing import Any

from lme_bench.code_digest import stage_code_digest
from lme_bench.config import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.providers.retry import RETRY_COLUMNS
from lme_bench.results.qa_tables import HypothesisRow

# Bump when a stage's result type or meaning changes. 3: full rankings. 4: session records,
# hypotheses and scores count retries by cause (retries_throttled, _timeout, _connection,
# _server), and scores carry `readable`.
CACHE_FORMAT = "4"


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache  # packaged files: they cannot change in a process
def _folder_digest(package: str, *parts: str) -> str:
    folder = resources.files(package).joinpath(*parts)
    texts = {f.name: f.read_text("utf-8") for f in folder.iterdir() if f.is_file()}
    return digest(texts)


def memory_identity(settings: Settings) -> dict[str, Any]:
    """Which memory system holds the memories: the store file or the server."""
    memory = settings.memory
    if memory.backend == "embedded":
        where: Any = str(settings.memory_path.resolve())
    elif memory.mcp.transport == "stdio":
        where = [memory.mcp.command, *memory.mcp.args]
    else:
        where = memory.mcp.url
    return {"backend": memory.backend, "where": where, "vault": memory.vault}


def provider_settings(settings: Settings, model: str | None) -> dict[str, Any] | None:
    """What the provider of `model` ("provider:model") answers with: a configured
    [providers.<name>]'s kind, endpoint and region (not its key's variable, nor a fake's
    latency: neither changes a reply); None for a built-in provider or no model."""
    if not model:
        return None
    configured = settings.providers.get(model.partition(":")[0])
    if configured is None:
        return None
    return configured.model_dump(mode="json", include={"kind", "base_url", "region"})


def _model_settings(settings: Settings, model: str | None) -> dict[str, Any]:
    models = settings.models
    parts = {
        "model": model,
        "temperature": models.temperature,
        "seed": models.seed,
        "max_tokens": models.max_tokens,
    }
    provider = provider_settings(settings, model)
    return parts | {"provider": provider} if provider else parts


def _search_settings(settings: Settings) -> dict[str, Any]:
    memory = settings.memory
    return {"search": memory.search, "alpha": memory.alpha, "embedding": memory.embedding_model}


def ingest_fingerprint(settings: Settings) -> str:
    """What an ingestion's memory contents depend on (besides the question)."""
    ingest = settings.ingest
    parts: dict[str, Any] = {"mode": ingest.mode, "memory": memory_identity(settings)}
    if ingest.mode != "raw":
        parts |= {
            "ingest": ingest.model_dump(mode="json"),
            "agent": _model_settings(settings, settings.models.agent),
            "prompts": _folder_digest("lme_bench.agent", "prompts", "v1"),
            "memory_prompts": _folder_digest("lme_bench.memory", "prompts", "chat", "v1"),
        }
    return digest(parts)


def _stage_settings(stage: str, settings: Settings) -> dict[str, Any]:
    from lme_bench.judge.prompts import judge_prompts
    from lme_bench.qa.reader import load_qa_prompts

    if stage == "ingest":
        return {"ingest": ingest_fingerprint(settings)}
    if stage == "retrieval":
        return _search_settings(settings) | {"top_k": settings.retrieval.top_k}
    if stage == "answer":
        return {
            "search": _search_settings(settings),
            "qa": settings.qa.model_dump(mode="json", exclude={"prompts_dir"}),
            "model": _model_settings(settings, settings.models.qa),
            "prompts": load_qa_prompts(settings.qa.prompts_dir).hashes,
        }
    if stage == "judge":
        judge = settings.judge
        return {
            "judge": judge.model_dump(mode="json", exclude={"prompts_dir"}),
            "model": _model_settings(settings, settings.models.judge),
            "second_provider": provider_settings(settings, judge.second_model),
            "prompts": judge_prompts(judge).hashes,
        }
    raise ValueError(f"no cache key for stage {stage!r}")


def memory_scope(settings: Settings, run_id: str) -> str:
    """The run part of memory titles: the run id, or with a shared cache one name per
    ingestion settings, so every run with those settings finds the same memories."""
    if settings.cache.scope == "shared":
        return "shared-" + ingest_fingerprint(settings)[:12]
    return run_id


# How long an answer took and how often it was retried do not change what is judged.
_VOLATILE = frozenset({"seconds", *RETRY_COLUMNS})


def upstream_digest(value: Any) -> str:
    """What a stage was handed by the stage before it."""
    if isinstance(value, IngestOutcome):  # the memory and the ingestion that filled it
        return digest([value.memory_id, value.vault_id, value.ingestion_id])
    if isinstance(value, MemoryLocation):
        return digest([value.memory_id, value.vault_id])
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
    parts = {
        "stage": stage,
        "question": ref.content_sha256,
        "settings": _stage_settings(stage, settings),
        "code": [CACHE_FORMAT, stage_code_digest(stage)],
        "scope": scope if settings.cache.scope == "run" else memory_identity(settings),
        "upstream": upstream_digest(upstream) if upstream is not None else None,
    }
    if ingestion_id is not None:
        parts["ingestion"] = ingestion_id
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", ref.question_id)[:40]
    return f"{stage}-{name}-{digest(parts)[:32]}"
