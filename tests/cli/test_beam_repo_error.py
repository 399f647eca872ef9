"""A BEAM run whose `[judge] beam_repo` is no BEAM checkout: one error, before any work, that
names the setting (and its environment variable) besides the file it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.beam.samples import write_chat, write_questions
from tests.cli.in_process import run_command


@pytest.mark.parametrize("from_environment", [False, True])
def test_a_wrong_beam_repo_is_named_by_its_setting(
    tmp_path: Path,
    from_environment: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = tmp_path / "data"
    write_chat(data)
    write_questions(data)
    not_a_checkout = tmp_path / "not-beam"
    not_a_checkout.mkdir()
    config = tmp_path / "beam.toml"
    config.write_text('[models]\nqa = "fake:quote-memory"\njudge = "fake:rubric-judge"\n')
    if from_environment:
        monkeypatch.setenv("LME_JUDGE__BEAM_REPO", str(not_a_checkout))
    else:
        config.write_text(config.read_text() + f'[judge]\nbeam_repo = "{not_a_checkout}"\n')
    results = tmp_path / "results"
    command = ["run", str(config), "--dataset", str(data / "chats")]
    done = run_command(capsys, monkeypatch, *command, "--results-dir", str(results))
    assert done.returncode == 2, done.stderr[-3000:]
    message = done.stderr.strip()
    assert message.startswith(f"lme-bench: error: [judge] beam_repo = '{not_a_checkout}': ")
    assert str(not_a_checkout / "src" / "prompts.py") + " not found" in message
    assert "LME_JUDGE__BEAM_REPO" in message and "git clone" in message
    assert "point the setting" not in message  # names it instead
    assert "Traceback" not in done.stderr
    assert not results.exists()
