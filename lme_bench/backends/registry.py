"""Find the backend class a config names, check its parameters, and build it.

`[memory] backend` is a built-in name (BUILT_IN), a name some installed package registers
under the `lme_bench.backends` entry-point group, `"package.module:Class"` for a class in any
importable module, or `"path/to/file.py:Class"` for a class in one Python file (a relative
path is taken from the current folder). `[memory.params]` is
checked by the class's `Params`; each error names the key.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from pydantic import ValidationError

from lme_bench.backends.names import BUILT_IN, registered, unknown_backend
from lme_bench.backends.protocol import BackendEnv, BackendParams, MemorySystem
from lme_bench.common.code_digest import closure_digest
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.embeddings import load_embedder

_REQUIRED = ("Params", "name", "capabilities")


def _module(module_name: str, where: str) -> ModuleType:
    """An importable module, or a Python file by its path (relative to the current folder)."""
    try:
        if not module_name.endswith(".py"):
            return importlib.import_module(module_name)
        path = Path(module_name).resolve()
        name = f"lme_bench_backend_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None or not path.is_file():
            raise ImportError(f"no Python file at {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look the module up by name
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    except ImportError as error:
        raise ConfigError(f"{where}: cannot import {module_name!r}: {error}") from error


def _load(target: str, where: str) -> type[MemorySystem]:
    module_name, _, attribute = target.rpartition(":")
    module = _module(module_name, where)
    cls = getattr(module, attribute, None)
    if not isinstance(cls, type):
        raise ConfigError(f"{where}: {module_name!r} has no class {attribute!r}")
    missing = [name for name in _REQUIRED if not hasattr(cls, name)]
    if missing or not issubclass(getattr(cls, "Params", object), BackendParams):
        raise ConfigError(
            f"{where}: {target} is not a memory backend (it needs {', '.join(_REQUIRED)},"
            " with Params a BackendParams subclass; see lme_bench/backends/protocol.py)"
        )
    return cast(type[MemorySystem], cls)


def backend_class(name: str) -> type[MemorySystem]:
    where = f"[memory] backend = {name!r}"
    problem = unknown_backend(name)
    if problem is not None:
        raise ConfigError(f"[memory] backend: {problem}")
    return _load(BUILT_IN.get(name) or registered().get(name) or name, where)


def backend_source_digest(name: str) -> str:
    """A hash of the backend's source (a changed backend ingests anew): a built-in's module and
    every lme_bench module it imports; a plugin's own file."""
    module_name = backend_class(name).__module__
    if module_name.startswith("lme_bench."):
        return closure_digest(module_name)
    source = Path(sys.modules[module_name].__file__ or "")
    return hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""


def backend_params(cls: type[MemorySystem], params: dict[str, Any]) -> BackendParams:
    try:
        return cls.Params.model_validate(params)
    except ValidationError as error:
        problems = [
            f"[memory.params] {'.'.join(str(part) for part in e['loc']) or '(all)'}: {e['msg']}"
            for e in error.errors()
        ]
        raise ConfigError(f"backend {cls.name!r}: " + "; ".join(problems)) from None


def backend_env(settings: Settings) -> BackendEnv:
    chat_model = None
    if settings.models.memory:  # LangChain is imported only for a system that calls a model
        from lme_bench.providers.memory_model import memory_chat_model

        chat_model = memory_chat_model(settings)
    memory = settings.memory
    return BackendEnv(
        data_dir=settings.memory_path.parent / "backends" / re.sub(r"\W+", "-", memory.backend),
        scope="",
        chat_model=chat_model,
        embedder=lambda: load_embedder(memory.embedding_model),
        extra={"settings": settings},
    )


def open_system(settings: Settings, scope: str = "") -> MemorySystem:
    """The configured memory system, built for one stage of one question. Every stage builds
    it alike (memory titles already differ between runs), so `scope` is not used."""
    cls = backend_class(settings.memory.backend)
    params = backend_params(cls, settings.memory.params)
    env = backend_env(settings)
    env.data_dir.mkdir(parents=True, exist_ok=True)
    system: MemorySystem = cast(Any, cls)(params, env)
    return system
