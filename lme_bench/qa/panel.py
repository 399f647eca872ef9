"""What the answer stage needs of the run, built once per run and handed to it
(lme_bench.qa.stage): the QA model with its retry policy and limiter, the QA prompts, and the
memory system as configured (lme_bench.backends.configured), so no question builds a model
client, reads a prompt file or checks the memory parameters of its own.

A panel pickles as the settings it was built from, and is built again where it is unpickled:
its model client and limiter belong to the process that made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lme_bench.backends.configured import ConfiguredBackend, configured_backend
from lme_bench.common.limits import Limiter, provider_limiter
from lme_bench.config.settings import Settings
from lme_bench.providers.calls import ChatCall
from lme_bench.providers.factory import ModelSpec, model_for
from lme_bench.providers.retry import RetryPolicy
from lme_bench.qa.reader import QaPrompts, load_qa_prompts


@dataclass(frozen=True)
class QaPanel:
    """The run's QA model, prompts and memory system (`qa_panel`)."""

    settings: Settings
    model: ChatCall  # the LangChain chat model of [models] qa
    policy: RetryPolicy
    spec: ModelSpec
    limiter: Limiter | None
    prompts: QaPrompts
    memory: ConfiguredBackend

    def __reduce__(self) -> tuple[Any, ...]:
        return (qa_panel, (self.settings,))


def qa_panel(settings: Settings, memory: ConfiguredBackend | None = None) -> QaPanel:
    """The run's answer stage, ready: a ProviderConfigError when [models] qa is unusable, a
    FileNotFoundError naming a missing QA prompt. `memory`: the run's configured memory
    system, where the run has derived it already."""
    model, policy, spec = model_for("qa", settings)
    prompts = load_qa_prompts(settings.qa.prompts_dir)
    limiter = provider_limiter(settings, spec.provider)
    memory = memory if memory is not None else configured_backend(settings)
    return QaPanel(settings, model, policy, spec, limiter, prompts, memory)
