"""A run's recorded settings: replayed whatever the environment says, and a run id asked for
with other settings is refused naming the keys (a new judge alone excepted)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lme_bench.config.settings import Settings, load_settings
from lme_bench.results import recorded_settings
from lme_bench.results.recorded_settings import (
    SettingsChanged,
    check_settings,
    differing_keys,
    flatten,
    record_settings,
)
from lme_bench.results.run_folder import RerunError
from lme_bench.run.request import RunRequest

CONFIG = Path("configs/full-fake.toml")


@pytest.fixture(autouse=True)
def _no_lme_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("LME_")]:
        monkeypatch.delenv(name)


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    every = {"run.results_dir": tmp_path, "run.id": "r1"} | overrides
    return load_settings(CONFIG, **every)


def _recorded(tmp_path: Path, **overrides: object) -> Path:
    run_dir = tmp_path / "r1"
    record_settings(run_dir, _settings(tmp_path, **overrides), {"config": str(CONFIG)})
    return run_dir


def test_flatten_gives_dotted_leaves_and_drops_empty_tables() -> None:
    nested = {"a": {"b": 1, "c": {"d": [1, 2]}, "e": {}}, "f": None}
    assert flatten(nested) == {"a.b": 1, "a.c.d": [1, 2], "f": None}


def test_keys_that_change_no_result_may_differ(tmp_path: Path) -> None:
    run_dir = _recorded(tmp_path)
    free = {
        "run.stages": ["retrieval", "report"],
        "limits.answer": 3,
        "limits.providers": {"fake": {"concurrency": 2}},
        "cache.storage": str(tmp_path / "elsewhere"),
        "models.timeout_s": 5.0,
        "run.task_tags": True,
        "run.link_base": "http://127.0.0.1:4201/",
    }
    check_settings(run_dir, _settings(tmp_path, **free))  # no error


def test_other_settings_are_refused_naming_every_differing_key(tmp_path: Path) -> None:
    run_dir = _recorded(tmp_path)
    changed = _settings(tmp_path, **{"qa.top_ke": 5, "models.judge": "fake:yes"})
    with pytest.raises(SettingsChanged) as raised:
        check_settings(run_dir, changed)
    text = str(raised.value)
    assert text.startswith(f"{run_dir}: run r1 was made with other settings (")
    assert 'models.judge: "fake:match-judge" -> "fake:yes"' in text
    assert "qa.top_ke: 10 -> 5" in text
    assert f"`lme-bench rerun r1 --results-dir {run_dir.parent}` reruns it" in text
    assert isinstance(raised.value, RerunError)  # the CLI's exit 2


def test_a_provider_added_is_a_difference_and_one_moved_is_not(tmp_path: Path) -> None:
    run_dir = _recorded(tmp_path, **{"providers.local": {"base_url": "http://127.0.0.1:1/v1"}})
    moved = _settings(tmp_path, **{"providers.local": {"base_url": "http://127.0.0.1:2/v1"}})
    recorded = json.loads((run_dir / "config.json").read_text())["settings"]
    assert differing_keys(recorded, moved, new_judge=False) == []  # the same model, elsewhere
    added = {"providers.lab": {"base_url": "http://127.0.0.1:3/v1"}}
    keys = differing_keys(recorded, _settings(tmp_path, **added), new_judge=False)
    assert "providers.lab.kind" in keys and "providers.lab.base_url" not in keys


def test_judging_alone_may_take_a_new_judge_and_its_provider_but_nothing_else(
    tmp_path: Path,
) -> None:
    run_dir = _recorded(tmp_path)
    judge_only = {"run.stages": ["judge", "report"]}
    new_judge = {
        **judge_only,
        "models.judge": "local:judge",
        "providers.local": {"base_url": "http://127.0.0.1:1/v1"},
        "judge.repeats": 3,
    }
    check_settings(run_dir, _settings(tmp_path, **new_judge))  # no error
    with pytest.raises(SettingsChanged, match=r"models\.judge"):  # answers would be redone too
        check_settings(run_dir, _settings(tmp_path, **new_judge | {"run.stages": None}))
    with pytest.raises(SettingsChanged, match=r"models\.judge"):  # some questions only: mixed
        check_settings(run_dir, _settings(tmp_path, **new_judge), failed_only=True)
    with pytest.raises(SettingsChanged, match=r"models\.qa"):  # the reader is no judge
        check_settings(run_dir, _settings(tmp_path, **judge_only, **{"models.qa": "fake:yes"}))


def test_a_replay_ignores_the_environment_of_today(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LME_MODELS__JUDGE", "fake:yes")
    monkeypatch.setenv("LME_QA__TOP_KE", "4")
    first = RunRequest(config=str(CONFIG), run_id="r1", results_dir=str(tmp_path), limit=2)
    settings = first.settings()
    record_settings(tmp_path / "r1", settings, first.model_dump(mode="json"))

    monkeypatch.setenv("LME_MODELS__JUDGE", "fake:match-judge")
    monkeypatch.delenv("LME_QA__TOP_KE")
    replay = first.model_copy(update={"replay": True, "config": "no/such/config.toml"})
    replayed = replay.settings()
    assert replayed.models.judge == "fake:yes" and replayed.qa.top_ke == 4
    assert replayed.redacted() == settings.redacted()
    with pytest.raises(SettingsChanged, match=r"models\.judge.*qa\.top_ke"):
        check_settings(tmp_path / "r1", first.settings())


def test_a_replay_of_a_run_that_recorded_nothing_names_its_folder(tmp_path: Path) -> None:
    request = RunRequest(run_id="gone", results_dir=str(tmp_path), replay=True)
    with pytest.raises(RerunError, match=f"{tmp_path / 'gone'}: no run here"):
        request.settings()


def test_a_run_from_before_config_json_is_checked_against_its_manifest(tmp_path: Path) -> None:
    run_dir = tmp_path / "r1"
    run_dir.mkdir()
    manifest = {"request": {}, "config": _settings(tmp_path).redacted()}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    check_settings(run_dir, _settings(tmp_path))
    with pytest.raises(SettingsChanged, match=r"qa\.strategy"):
        check_settings(run_dir, _settings(tmp_path, **{"qa.strategy": "two-pass"}))


def test_recording_the_same_settings_again_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = _recorded(tmp_path)
    writes: list[Path] = []
    real = recorded_settings.write_text_atomically

    def counted(path: Path, text: str) -> None:
        writes.append(path)
        real(path, text)

    monkeypatch.setattr(recorded_settings, "write_text_atomically", counted)
    record_settings(run_dir, _settings(tmp_path), {"config": str(CONFIG)})
    assert writes == []  # a full or read-only disk fails at the run's first table, not here
    started = {"flow_run_id": "another-invocation", "scheduled_start": "2026-12-07T03:00:00"}
    record_settings(run_dir, _settings(tmp_path), {"config": str(CONFIG), "schedule": started})
    assert writes == []  # how this invocation started is the manifest's, not the run's
    record_settings(run_dir, _settings(tmp_path, **{"qa.top_ke": 5}), {"config": str(CONFIG)})
    assert writes == [run_dir / "config.json"]
    assert json.loads(writes[0].read_text())["settings"]["qa"]["top_ke"] == 5


def test_a_damaged_record_is_one_error_naming_the_file(tmp_path: Path) -> None:
    run_dir = _recorded(tmp_path)
    (run_dir / "config.json").write_text('{"settings": {"qa": ')
    with pytest.raises(RerunError, match=f"{run_dir / 'config.json'}: not valid JSON"):
        check_settings(run_dir, _settings(tmp_path))


def test_a_replay_without_a_results_folder_finds_the_run_under_the_configs(
    tmp_path: Path,
) -> None:
    config = tmp_path / "run.toml"
    config.write_text(
        f'[run]\nresults_dir = "{tmp_path / "elsewhere"}"\n[models]\nqa = "fake:echo"\n'
    )
    first = RunRequest(config=str(config), run_id="r2")
    settings = first.settings()
    record_settings(tmp_path / "elsewhere" / "r2", settings, first.model_dump(mode="json"))
    replayed = first.model_copy(update={"replay": True}).settings()
    assert replayed.redacted() == settings.redacted()
