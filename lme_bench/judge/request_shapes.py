"""The judge's request body for each model family: the official body wherever the model accepts
it, else the nearest body it does accept.

The official evaluation sends `model`, `messages` (one user message), `n=1`, `temperature=0`,
`max_tokens=10`. That body goes unchanged to OpenAI's chat models and to OpenAI-compatible
servers. Other families get the nearest body they accept:

- OpenAI reasoning models (the o-series, the gpt-5 family): OpenAI answers 400 to `max_tokens`
  (they take `max_completion_tokens`) and to any temperature but the default 1, so neither is
  sent. Their reasoning tokens count against the cap, so 10 tokens would leave the reply empty:
  the effort is set as low as each model accepts and the cap is REASONING_CAP.
- Anthropic's Messages API: `max_tokens` (required) and `temperature` as official; no `n` (it
  rejects unknown fields; it answers once anyway).
- Bedrock's Converse API: `inferenceConfig` with `maxTokens` 10 and `temperature` 0 (and the
  empty `system` list langchain-aws sends).
- The scripted fake: temperature 0 and 10 tokens, though nothing is sent.

`request_shape(kind, model)` gives the shape (each provider kind's `judge_shape`,
lme_bench.providers.kinds); `RequestShape.body(model, prompt)` the exact body sent, and
`record(model)` that body with the prompt left out, for the run manifest.
"""

from __future__ import annotations

from lme_bench.providers.judge_shapes import (
    MAX_TOKENS,
    OFFICIAL,
    PROMPT,
    REASONING_CAP,
    Family,
    Layout,
    RequestShape,
    is_openai_reasoning,
    openai_reasoning_shape,
)
from lme_bench.providers.registry import PROVIDERS

__all__ = [
    "MAX_TOKENS",
    "OFFICIAL",
    "PROMPT",
    "REASONING_CAP",
    "Family",
    "Layout",
    "RequestShape",
    "is_openai_reasoning",
    "openai_reasoning_shape",
    "request_shape",
]


def request_shape(kind: str, model: str) -> RequestShape:
    """The judge request for a model of provider `kind` (a kind lme_bench.providers.registry
    names)."""
    provider = PROVIDERS.get(kind)
    if provider is None:
        raise ValueError(f"judge request shape: unsupported provider kind {kind!r}")
    return provider.judge_shape(model)
