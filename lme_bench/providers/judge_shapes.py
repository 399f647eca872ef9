"""The judge's request body, as a model family takes it: the official body (OFFICIAL) wherever
the model accepts it, else the nearest body it does accept. Each provider kind gives its
family's shape (`Provider.judge_shape`, lme_bench.providers.kinds); lme_bench.judge.request_shapes
says why each differs from the official one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

MAX_TOKENS = 10  # the official judge's output cap
# A yes/no judgement at the lowest effort takes a few hundred reasoning tokens at most; the cap
# leaves room for longer reasoning on hard cases, and a reply it still cuts is counted in the
# score rows' `capped_replies` (it reads as unreadable, so wrong, by the official rule).
REASONING_CAP = 2048
PROMPT = "<prompt>"  # stands for the judge prompt in a recorded body

Family = Literal[
    "openai-official", "openai-reasoning", "anthropic-messages", "bedrock-converse", "fake"
]
Layout = Literal["chat", "converse"]

_O_SERIES = re.compile(r"^o\d")  # o1, o1-mini, o3, o3-mini, o4-mini, …
_GPT5 = re.compile(r"^gpt-5(?P<minor>\.\d+)?(?P<rest>.*)$")
# Models that answer 400 to any reasoning_effort at all.
_NO_EFFORT = re.compile(r"^o1-(mini|preview)")


@dataclass(frozen=True, slots=True)
class RequestShape:
    """One family's judge request: every body field besides the model and the prompt."""

    family: Family
    endpoint: str
    fields: dict[str, Any] = field(default_factory=dict)
    differs: str = ""  # why it is not the official body ("" when it is)
    layout: Layout = "chat"

    def body(self, model: str, prompt: str) -> dict[str, Any]:
        """The request body exactly as sent (Converse: the model goes in the URL instead)."""
        if self.layout == "converse":
            return {"messages": [{"role": "user", "content": [{"text": prompt}]}], **self.fields}
        return {"model": model, "messages": [{"role": "user", "content": prompt}], **self.fields}

    def record(self, model: str) -> dict[str, Any]:
        """What the manifest keeps: the family, endpoint and body with the prompt as PROMPT."""
        return {
            "family": self.family,
            "endpoint": self.endpoint.format(model=model),
            "body": self.body(model, PROMPT),
            "differs_from_official": self.differs or None,
        }

    def field_value(self, *path: str) -> Any:
        """A field's value, e.g. field_value("inferenceConfig", "maxTokens")."""
        value: Any = self.fields
        for key in path:
            value = value[key]
        return value


OFFICIAL = RequestShape(
    "openai-official",
    "POST /chat/completions",
    {"n": 1, "temperature": 0, "max_tokens": MAX_TOKENS},
)


def is_openai_reasoning(model: str) -> bool:
    """An OpenAI model that rejects `max_tokens` and a temperature other than 1 (a name after
    a gateway's "openai/" prefix counts too)."""
    name = model.rsplit("/", 1)[-1].lower()
    return bool(_O_SERIES.match(name) or _GPT5.match(name))


def _reasoning_effort(name: str) -> str | None:
    """The lowest effort the model accepts; None where it accepts no reasoning_effort field."""
    if _NO_EFFORT.match(name):
        return None
    gpt5 = _GPT5.match(name)
    if gpt5 is None:
        return "low"  # the o-series: low, medium, high
    if "chat" in gpt5["rest"]:
        return None  # gpt-5-chat-latest and kin: ChatGPT's chat model, no reasoning field
    # gpt-5 (mini, nano): minimal, low, medium, high; gpt-5.1 and later: none (their default)
    return "none" if gpt5["minor"] else "minimal"


def openai_reasoning_shape(model: str) -> RequestShape:
    name = model.rsplit("/", 1)[-1].lower()
    fields: dict[str, Any] = {"n": 1, "max_completion_tokens": REASONING_CAP}
    effort = _reasoning_effort(name)
    if effort is not None:
        fields["reasoning_effort"] = effort
    return RequestShape(
        "openai-reasoning",
        "POST /chat/completions",
        fields,
        differs=(
            "OpenAI reasoning model: it rejects max_tokens and temperature 0, so the cap is "
            f"max_completion_tokens {REASONING_CAP} (reasoning tokens count against it) and "
            "the temperature is the model's fixed 1"
            + (f"; reasoning_effort {effort}, the lowest it accepts" if effort else "")
        ),
    )
