"""What OpenAI's chat completions endpoint refuses from a reasoning model (the o-series, the
gpt-5 family), with the error bodies it sends, and the reasoning tokens such a model spends
before its visible reply (they count against `max_completion_tokens`).

Written from OpenAI's documented behaviour: `max_tokens` is an unsupported parameter, any
temperature but 1 an unsupported value, and each model takes its own set of reasoning efforts
(none at all for o1-mini and o1-preview, and for the gpt-5 chat models).
"""

from __future__ import annotations

import re
from typing import Any

_O_SERIES = re.compile(r"^o\d")
_GPT5 = re.compile(r"^gpt-5(?P<minor>\.\d+)?(?P<rest>.*)$")
# Reasoning tokens a yes/no judgement takes at each effort, for the fake (None: the default).
REASONING_TOKENS: dict[str | None, int] = {
    "none": 0,
    "minimal": 12,
    "low": 120,
    "medium": 400,
    "high": 1500,
    None: 400,
}


def is_reasoning(model: str) -> bool:
    return bool(_O_SERIES.match(model) or _GPT5.match(model))


def efforts(model: str) -> tuple[str, ...]:
    """The reasoning_effort values the model takes (empty: the field is refused)."""
    if re.match(r"^o1-(mini|preview)", model):
        return ()
    gpt5 = _GPT5.match(model)
    if gpt5 is None:
        return ("low", "medium", "high")
    if "chat" in gpt5["rest"]:
        return ()
    if gpt5["minor"]:
        return ("none", "low", "medium", "high")
    return ("minimal", "low", "medium", "high")


def _error(message: str, param: str, code: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }


def refusal(body: dict[str, Any]) -> dict[str, Any] | None:
    """The 400 error body OpenAI answers to this request, or None if it takes it."""
    model = str(body.get("model", ""))
    if not is_reasoning(model):
        return None
    if "max_tokens" in body:
        return _error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        )
    if "temperature" in body and body["temperature"] != 1:
        return _error(
            f"Unsupported value: 'temperature' does not support {body['temperature']} with "
            "this model. Only the default (1) value is supported.",
            "temperature",
            "unsupported_value",
        )
    if "reasoning_effort" in body:
        allowed = efforts(model)
        if not allowed:
            return _error(
                "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                "reasoning_effort",
                "unsupported_parameter",
            )
        if body["reasoning_effort"] not in allowed:
            listed = ", ".join(f"'{e}'" for e in allowed)
            return _error(
                f"Unsupported value: 'reasoning_effort' does not support "
                f"'{body['reasoning_effort']}' with this model. Supported values are: {listed}.",
                "reasoning_effort",
                "unsupported_value",
            )
    return None


def reasoning_tokens(body: dict[str, Any]) -> int:
    """Reasoning tokens the model spends on this request (0 for other models)."""
    if not is_reasoning(str(body.get("model", ""))):
        return 0
    return REASONING_TOKENS[body.get("reasoning_effort")]
