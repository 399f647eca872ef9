"""What the results of ingesting into a memory depend on, besides the question: the settings a
stage's result is keyed on, hashed. Cache keys (lme_bench.run.cache_keys) and the ingestion's own
check that a memory keeps one set of ingestion settings (lme_bench.ingest.question) use it."""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

from lme_bench.backends.builtin_params import McpParams, builtin_params, memory_path
from lme_bench.backends.protocol import Capability
from lme_bench.backends.registry import backend_class, backend_source_digest
from lme_bench.config.settings import Settings
from lme_bench.config.transport import PROVIDER_TRANSPORT


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache  # packaged files: they cannot change in a process
def _folder_digest(package: str, *parts: str) -> str:
    folder = resources.files(package).joinpath(*parts)
    texts = {f.name: f.read_text("utf-8") for f in folder.iterdir() if f.is_file()}
    return digest(texts)


def memory_identity(settings: Settings) -> dict[str, Any]:
    """Which memory system holds the memories: the store file or the server; for any other
    backend, its parameters, the source of its module, its model and its data folder."""
    memory = settings.memory
    builtin = builtin_params(settings)  # embedded, mcp: their checked [memory.params]
    if builtin is None:
        where: Any = {
            "params": memory.params,
            "source": backend_source_digest(memory.backend),
            "model": model_settings(settings, "memory"),
            "data": str(memory_path(settings).parent.resolve()),
        }
    elif not isinstance(builtin, McpParams):
        where = _store_place(settings)
    elif builtin.transport == "stdio":
        where = [builtin.command, *builtin.args]
    else:
        where = builtin.url
    vault = builtin.vault if builtin is not None else None
    return {"backend": memory.backend, "where": where, "vault": vault}


def _store_place(settings: Settings) -> Any:
    """The embedded store's file. With results at a URL, a store in the working folder is
    named by the URL and its place in the folder: each worker works in a folder of its own,
    and its builds travel through the URL's build store (lme_bench/run/builds.py), so keys
    made on one worker hold on every other."""
    path = memory_path(settings).resolve()
    results = settings.run.results_url
    if results:
        work = Path(settings.run.results_dir).resolve()
        if path.is_relative_to(work):
            return {"results": results, "file": path.relative_to(work).as_posix()}
    return str(path)


def provider_settings(settings: Settings, model: str | None) -> dict[str, Any] | None:
    """What the provider of `model` ("provider:model") answers with: a configured
    [providers.<name>]'s kind (not how it is reached: its endpoint, region, key's variable or
    a fake's latency change no reply, config/transport.py); None for a built-in provider or
    no model."""
    if not model:
        return None
    configured = settings.providers.get(model.partition(":")[0])
    if configured is None:
        return None
    fields = {"kind", "base_url", "region"} - set(PROVIDER_TRANSPORT)
    return configured.model_dump(mode="json", include=fields)


def model_settings(settings: Settings, role: str) -> dict[str, Any]:
    """What the model of `role` ("agent", "memory", "qa", "judge") answers with."""
    models = settings.models
    model = getattr(models, role)
    parts = {
        "model": model,
        "temperature": models.temperature,
        "seed": models.seed,
        "max_tokens": models.max_tokens.for_role(role),
    }
    provider = provider_settings(settings, model)
    return parts | {"provider": provider} if provider else parts


def ingest_fingerprint(settings: Settings) -> str:
    """What an ingestion's memory contents depend on (besides the question)."""
    ingest = settings.ingest
    parts: dict[str, Any] = {"mode": ingest.mode, "memory": memory_identity(settings)}
    if ingest.mode != "raw":
        parts |= {
            "ingest": ingest.model_dump(mode="json"),
            "agent": model_settings(settings, "agent"),
        }
        if writes_with_own_tools(settings):
            parts["prompts"] = _folder_digest("lme_bench.agent", "prompts", "tools", "v1")
        else:
            parts |= {
                "prompts": _folder_digest("lme_bench.agent", "prompts", "v1"),
                "memory_prompts": _folder_digest(
                    "lme_bench.reference_memory", "prompts", "chat", "v1"
                ),
            }
    return digest(parts)


def writes_with_own_tools(settings: Settings) -> bool:
    """Whether the memory agent writes with the memory system's own tools (agentic mode on a
    system without an entry surface: lme_bench/ingest/agent_tools.py)."""
    if settings.ingest.mode != "agentic":
        return False
    return Capability.ENTRIES not in backend_class(settings.memory.backend).capabilities
