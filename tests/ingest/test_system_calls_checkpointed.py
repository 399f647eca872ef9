"""A memory system's own model calls (mem0's extraction, Graphiti's graph building) are kept
in each session's checkpoint as they are made, so a run stopped mid-ingestion counts and
prices them in its summary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lme_bench.backends.protocol import Session, Usage
from lme_bench.config.settings import load_settings
from lme_bench.dataset.views import SessionView, TurnView
from lme_bench.ingest.as_they_are import WholeSessions
from lme_bench.ingest.checkpoint import Checkpoints, checkpointed_states
from lme_bench.run import stopped


class _Extracting:
    """A system whose ingestion makes one model call per session (100 in, 20 out) and whose
    deferred work, done in wait_until_ready, makes one more (50 in, 10 out)."""

    def __init__(self) -> None:
        self.made = Usage()

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        self.made.add(Usage(model_calls=1, input_tokens=100, output_tokens=20))

    async def wait_until_ready(self, memory_id: str) -> None:
        self.made.add(Usage(model_calls=1, input_tokens=50, output_tokens=10))

    def usage(self) -> Usage:
        return Usage(**{name: getattr(self.made, name) for name in Usage.__dataclass_fields__})


def _session(index: int) -> SessionView:
    return SessionView(f"s{index}", "2023/05/20 (Sat) 02:21", (TurnView("user", f"turn {index}"),))


def _stopped_run_config(tmp_path: Path) -> Path:
    config = tmp_path / "mem.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[models]\nmemory = "local:extractor"\n'
        '[prices."local:extractor"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 2000.0\n'
        '[providers.local]\nkind = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    return config


def _stopped_run(tmp_path: Path) -> stopped.StoppedRun:
    config = _stopped_run_config(tmp_path)
    settings = load_settings(config, **{"run.results_dir": str(tmp_path)})
    return stopped.StoppedRun.of(settings, tmp_path / "r1", ["m1"])


def test_a_stop_mid_ingestion_counts_the_system_s_own_calls(tmp_path: Path) -> None:
    system = _Extracting()
    checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
    writer = WholeSessions(system, checkpoints)  # type: ignore[arg-type]

    async def two_sessions() -> None:
        for index in range(2):
            await writer.write("q1", index, _session(index), "m1", pending=False)

    asyncio.run(two_sessions())  # stopped here: sent, not yet marked stored
    line = stopped.write_stopped_summary(_stopped_run(tmp_path), "SIGTERM")
    # 2 calls, 240 tokens: $(200 * 1000 + 40 * 2000) / 1e6
    assert line == (
        "Stopped by SIGTERM: 0 sessions stored, 2 model calls, 240 tokens, $0.2800;"
        " the same command resumes run r1"
    )
    summary = json.loads((tmp_path / "r1" / "summary.json").read_text())
    assert summary["memory_system"] == {
        "model": "local:extractor",
        "model_calls": 2,
        "input_tokens": 200,
        "output_tokens": 40,
    }
    assert summary["cost"]["ingestion"] == pytest.approx(0.28)
    markdown = (tmp_path / "r1" / "summary.md").read_text()
    assert "2 calls of the memory system's own model, 200 input and 40 output tokens" in markdown

    asyncio.run(writer.finish("m1"))  # the deferred work is the last session's
    states = checkpointed_states(tmp_path / "checkpoints.sqlite", ["m1"], "raw")
    checkpoints.close()
    assert [state for state, _ in states] == ["done", "done"]
    assert [(r.system_model_calls, r.system_input_tokens) for _, r in states] == [
        (1, 100),
        (2, 150),
    ]


def test_an_unpriced_memory_model_leaves_the_cost_unknown(tmp_path: Path) -> None:
    run = _stopped_run(tmp_path)
    run = stopped.StoppedRun(**{**run.__dict__, "prices": {}})
    checkpoints = Checkpoints(tmp_path / "checkpoints.sqlite")
    writer = WholeSessions(_Extracting(), checkpoints)  # type: ignore[arg-type]
    asyncio.run(writer.write("q1", 0, _session(0), "m1", pending=False))
    line = stopped.write_stopped_summary(run, "SIGINT")
    checkpoints.close()
    assert "1 model calls, 120 tokens, cost unknown (no [prices] for local:extractor)" in line


def test_a_failed_run_counts_the_calls_of_ingestions_that_did_not_finish(tmp_path: Path) -> None:
    from lme_bench.ingest.records import SessionRecord
    from lme_bench.results.cost import system_usage

    settings = load_settings(_stopped_run_config(tmp_path))
    unfinished = [SessionRecord("q1", "s0", 0, "raw", turns=1, system_model_calls=3,
                                system_input_tokens=300, system_output_tokens=60)]  # fmt: skip
    counted = system_usage([], settings, unfinished)
    assert counted is not None
    assert (counted["model"], counted["model_calls"], counted["input_tokens"]) == (
        "local:extractor",
        3,
        300,
    )
    assert system_usage([], settings, []) is None  # nothing made, nothing said
