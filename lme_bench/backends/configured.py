"""The run's memory system as configured, derived once per run and handed to every stage: the
class `[memory] backend` names, its `[memory.params]` checked by the class's `Params`, its data
folder, and the `[models] memory` model. A stage opens one system from it per question
(`ConfiguredBackend.open`); nothing of the configuration is read again there.

A ConfiguredBackend pickles as the settings it was derived from, and is derived again where it
is unpickled (a worker process): its model client and limiter belong to the process that made
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lme_bench.backends.protocol import BackendParams, MemorySystem
from lme_bench.backends.registry import (
    backend_class,
    backend_data_dir,
    backend_params,
    construct,
    memory_model,
    run_env,
)
from lme_bench.config.settings import Settings

if TYPE_CHECKING:
    from lme_bench.providers.memory_model import MemoryModel


@dataclass(frozen=True)
class ConfiguredBackend:
    """Everything a stage needs to open the run's memory system (`configured_backend`)."""

    settings: Settings
    cls: type[MemorySystem]
    params: BackendParams
    data_dir: Path
    model: MemoryModel | None

    def open(self) -> MemorySystem:
        """A new system for one stage of one question, built from the checked parameters."""
        env = run_env(self.settings, self.data_dir, self.model)
        return construct(self.cls, self.params, env)

    def __reduce__(self) -> tuple[Any, ...]:
        return (configured_backend, (self.settings,))


def configured_backend(settings: Settings) -> ConfiguredBackend:
    """The run's memory system as configured; a ConfigError naming each bad `[memory.params]`
    key, or a backend that cannot be found."""
    cls = backend_class(settings.memory.backend)
    params = backend_params(cls, settings.memory.params)
    return ConfiguredBackend(
        settings, cls, params, backend_data_dir(settings), memory_model(settings)
    )


def open_system(settings: Settings) -> MemorySystem:
    """The configured memory system, for one use (a tool, a test): a run derives its
    configuration once and its stages open systems from that."""
    return configured_backend(settings).open()
