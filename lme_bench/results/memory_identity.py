"""Which memory system a run searched: the backend's name and a short digest of its own
parameters (`[memory.params]`), the same from the settings of a run and from its config.json."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from lme_bench.backends.builtin_params import comparable_memory

DIGEST_CHARS = 12


def params_digest(params: Mapping[str, Any]) -> str:
    """The first DIGEST_CHARS hex digits of the SHA-256 of the parameters as canonical JSON
    (keys sorted), so two runs with equal parameters show equal digests."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


def memory_identity(memory: Mapping[str, Any]) -> dict[str, Any]:
    """Backend, parameters and their digest from a `[memory]` section (settings as a dict): a
    built-in's params as its Params read them, defaults left out, and a run recorded with the
    old `[memory] search` or `[memory.mcp]` spelling named as one configured today."""
    memory = comparable_memory(memory)
    params = dict(memory.get("params") or {})
    return {
        "backend": memory.get("backend") or "embedded",
        "params": params,
        "params_digest": params_digest(params),
    }
