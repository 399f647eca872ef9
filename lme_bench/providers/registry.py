"""The provider kinds, one object each (lme_bench.providers.kinds), in the order
`[providers.<name>] kind` lists them. Everything that differs between kinds is asked of
`provider_for(kind)`; the kind names a provider may be given without [providers] (BUILT_IN),
the kinds a batch job can send, and the fault classifiers come from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import cast

from lme_bench.config.settings import PROVIDER_KINDS, ProviderKind
from lme_bench.providers.fault_types import Fault
from lme_bench.providers.kinds.anthropic import Anthropic
from lme_bench.providers.kinds.base import Provider
from lme_bench.providers.kinds.bedrock import Bedrock
from lme_bench.providers.kinds.fake import Fake
from lme_bench.providers.kinds.openai import OpenAI, OpenAICompatible

PROVIDERS: dict[str, Provider] = {
    provider.kind: provider
    for provider in (OpenAI(), OpenAICompatible(), Anthropic(), Bedrock(), Fake())
}
if tuple(PROVIDERS) != PROVIDER_KINDS:  # the settings' Literal lists the same kinds
    raise ImportError(f"provider kinds {tuple(PROVIDERS)} != ProviderSettings' {PROVIDER_KINDS}")

# Provider names usable without [providers.<name>]: each built-in kind under its own name.
BUILT_IN: dict[str, ProviderKind] = {
    kind: cast(ProviderKind, kind) for kind, p in PROVIDERS.items() if p.built_in
}


def provider_for(kind: str) -> Provider:
    return PROVIDERS[kind]


def kinds_where(has: Callable[[Provider], bool]) -> tuple[str, ...]:
    return tuple(kind for kind, provider in PROVIDERS.items() if has(provider))


def titles_where(has: Callable[[Provider], bool]) -> str:
    """The kinds' titles in words: "OpenAI, OpenAI-compatible or Anthropic"."""
    titles = [provider.title for provider in PROVIDERS.values() if has(provider)]
    return " or ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles)


@functools.cache
def fault_classifiers() -> tuple[Callable[[BaseException], Fault], ...]:
    """Each kind's own fault classifier, in kind order, each once (OpenAI-compatible servers
    raise OpenAI's SDK errors, classified by OpenAI's)."""
    found: dict[object, Callable[[BaseException], Fault]] = {}
    for provider in PROVIDERS.values():
        function = type(provider).classify_fault
        if function is not Provider.classify_fault:
            found.setdefault(function, provider.classify_fault)
    return tuple(found.values())
