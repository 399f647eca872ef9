"""One batch API client per provider endpoint and key in a process: a run looks at its jobs
many times, and each client keeps its connections alive between looks."""

from __future__ import annotations

import functools

from lme_bench.providers.batch.anthropic_batch import AnthropicBatchApi
from lme_bench.providers.batch.openai_batch import OpenAIBatchApi
from lme_bench.providers.batch.protocol import BatchApi


@functools.lru_cache(maxsize=16)
def batch_client(kind: str, api_key: str, base_url: str | None, timeout_s: float) -> BatchApi:
    """The client of `kind`'s batch API: "anthropic", else OpenAI's (OpenAI-compatible too)."""
    if kind == "anthropic":
        return AnthropicBatchApi(api_key, base_url, timeout_s)
    return OpenAIBatchApi(api_key, base_url, timeout_s)
