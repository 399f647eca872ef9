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
from typing import TYPE_CHECKING, Any, cast

from lme_bench.backends.protocol import BackendEnv, BackendParams, MemorySystem
from lme_bench.backends.registry import backend_class, backend_data_dir, backend_params
from lme_bench.config.settings import Settings
from lme_bench.embeddings import load_embedder

if TYPE_CHECKING:
    from lme_bench.providers.memory_model import MemoryModel


def memory_model(settings: Settings) -> MemoryModel | None:
    """The `[models] memory` model, built once; None when the config names none (LangChain is
    imported only for a system that calls a model)."""
    if not settings.models.memory:
        return None
    from lme_bench.providers.memory_model import memory_model as built

    return built(settings)


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


def run_env(settings: Settings, data_dir: Path, model: MemoryModel | None) -> BackendEnv:
    """What a run gives a backend besides its parameters: its folder, the memory model (a
    wrapper of its own) and a loader of the `[memory] embedding_model` embedder."""
    embedding_model = settings.memory.embedding_model
    where = f"[memory] backend = {settings.memory.backend!r}"
    return BackendEnv(
        data_dir=data_dir,
        scope="",
        chat_model=model.for_one_system() if model is not None else None,
        embedder=lambda: load_embedder(embedding_model, where),
    )


def construct(cls: type[MemorySystem], params: BackendParams, env: BackendEnv) -> MemorySystem:
    """`cls(params, env)` with its folder created: how every backend is built."""
    env.data_dir.mkdir(parents=True, exist_ok=True)
    system: MemorySystem = cast(Any, cls)(params, env)
    return system


def configured_backend(settings: Settings) -> ConfiguredBackend:
    """The run's memory system as configured; a ConfigError naming each bad `[memory.params]`
    key, or a backend that cannot be found."""
    cls = backend_class(settings.memory.backend)
    params = backend_params(cls, settings.memory.params)
    return ConfiguredBackend(
        settings, cls, params, backend_data_dir(settings), memory_model(settings)
    )
