"""A URL where a run's results folder is expected is taken as the place of the results, the run
working in a local folder named for it (never a local folder named `s3:/…`); a storage URL
carrying credentials is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench import cli
from lme_bench.config.settings import ConfigError, load_settings

ROOT = Path(__file__).resolve().parents[2]
URL = "s3://lme/runs"


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(body)
    return path


def test_a_url_results_dir_in_the_config_works_in_a_local_folder_not_named_like_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    settings = load_settings(_config(tmp_path, f'[run]\nresults_dir = "{URL}/"\n'))
    assert settings.run.results_url == URL
    work = settings.run.results_dir
    assert work.is_relative_to(tmp_path / "cache") and "s3:" not in str(work)


def test_a_url_results_dir_from_the_environment_is_taken_with_its_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LME_RUN__RESULTS_DIR", URL)
    monkeypatch.setenv("LME_RUN__WORK_DIR", str(tmp_path / "work"))
    settings = load_settings(_config(tmp_path, ""))
    assert (settings.run.results_url, settings.run.results_dir) == (URL, tmp_path / "work")


def test_credentials_in_the_results_url_are_refused_and_not_echoed(tmp_path: Path) -> None:
    body = '[run]\nresults_dir = "s3://AKIAEXAMPLE:hush-hush@lme/runs"\n'
    with pytest.raises(ConfigError) as caught:
        load_settings(_config(tmp_path, body))
    assert "results_dir" in str(caught.value) and "hush-hush" not in str(caught.value)


def test_a_file_url_results_dir_is_its_local_folder(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path, f'[run]\nresults_dir = "file://{tmp_path}/r"\n'))
    assert settings.run.results_dir == tmp_path / "r"


@pytest.mark.parametrize(
    "command",
    [["run", str(ROOT / "configs" / "default.toml")], ["rerun", "s3a"], ["compare", "a", "b"]],
)
def test_credentials_in_a_results_dir_option_are_refused_before_anything_is_written(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        cli.main([*command, "--results-dir", "s3://AKIAEXAMPLE:hush-hush@lme/runs"])
    assert stopped.value.code == cli.EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert "--results-dir" in error and "environment" in error and "hush-hush" not in error
    assert list(tmp_path.iterdir()) == []  # no folder s3:/lme/runs


def test_credentials_in_the_cache_url_are_refused_and_not_echoed(tmp_path: Path) -> None:
    body = '[cache]\nstorage = "s3://AKIAEXAMPLE:hush-hush@lme/cache"\n'
    with pytest.raises(ConfigError) as caught:
        load_settings(_config(tmp_path, body))
    message = str(caught.value)
    assert "cache.storage" in message and "environment" in message
    assert "hush-hush" not in message and "AKIAEXAMPLE" not in message
