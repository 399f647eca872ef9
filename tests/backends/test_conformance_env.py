"""The conformance suite builds a backend the way a run does: the same BackendEnv (the run's
embedder, its memory model when one is configured) and the same check of its parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docs.example_backend import SessionNotes
from lme_bench.backends.protocol import BackendEnv, BackendParams
from lme_bench.backends.registry import backend_env
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.conformance import build_system


class EnvProbe(SessionNotes):
    """The example backend, keeping the env it was given."""

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        super().__init__(params, env)
        self.env = env


def _env(system: Any) -> BackendEnv:
    assert isinstance(system, EnvProbe)
    return system.env


def test_the_env_is_the_runs_with_its_embedder(tmp_path: Path) -> None:
    settings = Settings(memory={"embedding_model": "hashing-trigram-256"})
    env = _env(build_system(EnvProbe, {"min_word": 3}, tmp_path / "data", settings=settings))
    assert env.data_dir == tmp_path / "data" and env.data_dir.is_dir()
    assert env.chat_model is None  # no [models] memory configured
    run_env = backend_env(settings, data_dir=tmp_path / "data")
    assert env.scope == run_env.scope == ""
    assert env.embedder is not None
    embedder = env.embedder()
    assert embedder.name == "hashing-trigram-256"
    (vector,) = embedder.embed(["a greyhound named Pixel"])
    assert len(vector) == embedder.dim == 256


def test_a_configured_memory_model_reaches_the_backend(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('[models]\nmemory = "fake:mem0-extractor"\n')
    env = _env(build_system(EnvProbe, {}, tmp_path / "data", settings=config))
    run_env = backend_env(Settings(models={"memory": "fake:mem0-extractor"}))
    assert env.chat_model is not None
    assert type(env.chat_model) is type(run_env.chat_model)


def test_parameters_are_checked_as_a_run_checks_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="did you mean 'min_word'"):
        build_system(EnvProbe, {"min_wrd": 3}, tmp_path)
