from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.backends.builtin_params import memory_path
from lme_bench.config.settings import ConfigError, load_settings


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


def test_default_config_file_is_the_embedded_no_key_setup() -> None:
    settings = load_settings(Path("configs/default.toml"))
    assert settings.memory.backend == "embedded"
    assert settings.ingest.mode == "raw"
    assert settings.dataset.path is None  # the bundled sample
    assert memory_path(settings) == Path("results/memory.sqlite")


def test_environment_overrides_toml_and_explicit_overrides_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _toml(tmp_path, '[run]\nid = "from-toml"\n[memory.params]\npath = "a.sqlite"\n')
    assert load_settings(path).run.id == "from-toml"
    monkeypatch.setenv("LME_RUN__ID", "from-env")
    monkeypatch.setenv("LME_MEMORY__PARAMS__PATH", "/tmp/b.sqlite")
    settings = load_settings(path)
    assert settings.run.id == "from-env"
    assert memory_path(settings) == Path("/tmp/b.sqlite")
    assert load_settings(path, **{"run.id": "from-cli"}).run.id == "from-cli"


def test_memory_path_follows_results_dir(tmp_path: Path) -> None:
    settings = load_settings(None, **{"run.results_dir": str(tmp_path)})
    assert memory_path(settings) == tmp_path / "memory.sqlite"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[run]\nidd = 1\n", "run.idd: Extra inputs are not permitted"),
        ("[nonsense]\nx = 1\n", "nonsense: Extra inputs are not permitted"),
        ('[memory]\nbackend = "redis"\n', "memory.backend"),
        ("[limits]\ningest = -1\n", "limits.ingest"),
        ('[run]\nid = "../escape"\n', "run.id"),
        ("[run\n", "not valid TOML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, words: str) -> None:
    path = _toml(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(path) in str(caught.value) and words in str(caught.value)


def test_unknown_environment_key_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LME_RUN__BOGUS", "1")
    with pytest.raises(ConfigError, match=r"run\.bogus"):
        load_settings(None)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_settings(tmp_path / "absent.toml")


def test_judge_defaults_to_the_official_model_and_none_opts_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.providers.errors import ProviderConfigError
    from lme_bench.run.steps import plan_run

    assert load_settings(None).models.judge == "openai:gpt-4o-2024-08-06"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    needs_judge = load_settings(
        None, **{"models.qa": "fake:quote-memory", "run.results_dir": str(tmp_path)}
    )
    with pytest.raises(ProviderConfigError, match="judge = 'openai:gpt-4o-2024-08-06'"):
        plan_run(needs_judge)
    fallback_only = load_settings(
        None,
        **{
            "models.qa": "fake:quote-memory",
            "models.judge": "none",
            "run.results_dir": str(tmp_path),
        },
    )
    assert fallback_only.models.judge is None
    plan_run(fallback_only)  # no model problem: the fallback needs no key


@pytest.mark.parametrize("config", sorted(Path("configs").glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_config_loads(config: Path) -> None:
    settings = load_settings(config)
    assert settings.limits.ingest >= 1 and settings.cache.scope in ("run", "shared", "off")
