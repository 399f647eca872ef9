"""The summary a stopped run leaves, from its checkpoints: what it counts, and a stop that is
never kept waiting by it (a summary that fails or takes too long is one line)."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest

from lme_bench.config.settings import load_settings
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.records import SessionRecord
from lme_bench.run import stopped


def _run(tmp_path: Path, memory_ids: list[str]) -> stopped.StoppedRun:
    config = tmp_path / "local.toml"
    config.write_text(
        '[ingest]\nmode = "context-only"\n[models]\nagent = "local:tiny"\n'
        '[prices."local:tiny"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 2000.0\n'
        '[providers.local]\nkind = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    settings = load_settings(config, **{"run.results_dir": str(tmp_path)})
    return stopped.StoppedRun.of(settings, tmp_path / "r1", memory_ids)


def _record(question: str, index: int) -> SessionRecord:
    return SessionRecord(
        question, f"s{index}", index, "context-only", turns=2, llm_calls=2,
        input_tokens=100, output_tokens=50,
    )  # fmt: skip


def test_the_summary_counts_the_run_s_checkpointed_sessions_and_their_cost(
    tmp_path: Path,
) -> None:
    checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
    for index in range(3):
        checkpoints.save_pending("m1", _record("q1", index), [], None)
    checkpoints.mark_all_done("m1", [_record("q1", 0), _record("q1", 1)])
    checkpoints.save_pending("other", _record("q9", 0), [], None)  # another run's memory
    line = stopped.write_stopped_summary(_run(tmp_path, ["m1"]), "SIGTERM")
    checkpoints.close()
    assert line == (
        "Stopped by SIGTERM: 2 sessions stored, 6 model calls, 450 tokens, $0.6000;"
        " the same command resumes run r1"
    )
    summary = json.loads((tmp_path / "r1" / "summary.json").read_text())
    assert summary["ingestion"]["stored_sessions"] == 2
    assert summary["ingestion"]["unfinished_sessions"] == 1
    assert summary["cost"]["total"] == pytest.approx(0.6)
    markdown = (tmp_path / "r1" / "summary.md").read_text()
    assert line in markdown and "1 saved but not yet stored" in markdown


def test_a_summary_that_fails_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "checkpoints.sqlite").write_text("not a database")
    stopped.running(_run(tmp_path, ["m1"]))
    try:
        summary = stopped.start_stop_summary("SIGINT")
        assert summary is not None
        line = summary.result(time.monotonic() + 30)
    finally:
        stopped.running(None)
    assert line.startswith("no summary of the stopped run written: DatabaseError")
    assert "\n" not in line and not (tmp_path / "r1" / "summary.md").exists()


def test_a_summary_that_takes_too_long_leaves_the_stop_on_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def stuck(run: stopped.StoppedRun, signal_name: str) -> str:
        release.wait(30)
        return "written"

    monkeypatch.setattr(stopped, "write_stopped_summary", stuck)
    summary = stopped.StopSummary(_run(tmp_path, ["m1"]), "SIGTERM")
    started = time.monotonic()
    line = summary.result(started + 0.2)
    release.set()
    assert time.monotonic() - started < 10  # the deadline, not the summary, ended the wait
    assert line.startswith("no summary of the stopped run written to ")
    assert line.endswith("it took longer than the stop's grace")


def test_no_run_named_no_summary() -> None:
    stopped.running(None)
    assert stopped.start_stop_summary("SIGTERM") is None


def test_the_answers_and_verdicts_made_before_the_stop_are_counted(tmp_path: Path) -> None:
    from lme_bench.results.cost import Usage
    from lme_bench.run.progress import RunProgress

    checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
    checkpoints.save_pending("m1", _record("q1", 0), [], None)
    checkpoints.mark_all_done("m1", [_record("q1", 0)])
    progress = RunProgress(2, ["ingest", "answer", "judge"], {}, agent_model="local:tiny")
    answered = type("Answer", (), {"qa_model": "local:tiny", "llm_calls": 1})()
    answered.input_tokens, answered.output_tokens = 300, 20
    progress.record("answer", answered)
    progress.record("answer", answered, from_cache=True)  # an earlier run's: not spent now
    assert progress.made_after_ingestion() == (1, [Usage("local:tiny", 300, 20)])
    run = dataclasses.replace(_run(tmp_path, ["m1"]), answered=progress.made_after_ingestion)
    line = stopped.write_stopped_summary(run, "SIGINT")
    checkpoints.close()
    # 2 agent calls, 150 tokens (one session) + 1 reader call, 320 tokens; $1000/$2000 per Mtok
    assert line.startswith("Stopped by SIGINT: 1 sessions stored, 3 model calls, 470 tokens,")
    summary = json.loads((tmp_path / "r1" / "summary.json").read_text())
    assert summary["answers_and_verdicts"] == {
        "llm_calls": 1,
        "input_tokens": 300,
        "output_tokens": 20,
    }
    expected = (100 + 300) / 1e6 * 1000 + (50 + 20) / 1e6 * 2000
    assert summary["cost"]["total"] == pytest.approx(expected)
