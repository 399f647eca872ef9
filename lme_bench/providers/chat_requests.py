"""The record of a chat call's request, for a run's manifest: in the form of a judge request
shape's record (lme_bench.providers.judge_shapes.RequestShape.record: family, endpoint, body,
why it differs), read from the built call by its provider kind (`Provider.chat_request`), so it
is what the call sends. The messages vary call by call and are left out of the body."""

from __future__ import annotations

from typing import Any

from lme_bench.providers.registry import provider_for
from lme_bench.providers.spec import ModelSpec


def chat_request_record(
    spec: ModelSpec, call: Any, family: str, differs: str | None = None
) -> dict[str, Any]:
    """`call` (built for `spec`: its kind's `chat_call`, else its chat model) as the manifest
    records it: `family` names who sends it, `differs` why it is not the official request."""
    endpoint, body = provider_for(spec.kind).chat_request(spec, call)
    return {
        "family": family,
        "endpoint": endpoint,
        "body": body,
        "differs_from_official": differs or None,
    }
