"""A run recorded before a setting existed compares that setting as its default: adding a key
to the settings (such as [judge] profile) does not make every earlier run 'made with other
settings', while a recorded value that differs still does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.config.settings import load_settings
from lme_bench.results.recorded_settings import SettingsChanged, check_settings


def _record(run_dir: Path, settings: dict[str, object]) -> None:
    run_dir.mkdir()
    (run_dir / "config.json").write_text(json.dumps({"request": {}, "settings": settings}))


def test_a_key_the_record_lacks_counts_as_its_default(tmp_path: Path) -> None:
    settings = load_settings(None)
    recorded = settings.redacted()
    del recorded["judge"]["profile"]
    _record(tmp_path / "old", recorded)
    check_settings(tmp_path / "old", settings)  # no error: the key was unset then too

    with_profile = load_settings(None, **{"judge.profile": str(tmp_path / "p.json")})
    with pytest.raises(SettingsChanged, match=r"judge\.profile: \(unset\) -> "):
        check_settings(tmp_path / "old", with_profile)
