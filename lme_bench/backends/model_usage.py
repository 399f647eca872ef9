"""The memory system's own model calls, read off the account of `env.chat_model` (the memory
model lme-bench hands a backend counts every call it makes: lme_bench.providers.calls)."""

from __future__ import annotations

from typing import Any

from lme_bench.backends.protocol import Usage

# The account's counters, and the Usage field each one fills.
_FIELDS = {
    "calls": "model_calls",
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "capped_replies": "capped_replies",
    "timeouts": "timeouts",
}

Counts = tuple[int, ...]


def model_account_counts(account: Any) -> Counts:
    """The account's counters now (zeros for no account), to subtract later."""
    return tuple(int(getattr(account, name, 0)) for name in _FIELDS)


def model_usage_since(account: Any, before: Counts, **embeddings: int) -> Usage:
    """The model calls counted since `before`, with the backend's own embedding counts."""
    now = model_account_counts(account)
    calls = {field: a - b for field, a, b in zip(_FIELDS.values(), now, before, strict=True)}
    return Usage(**calls, **embeddings)
