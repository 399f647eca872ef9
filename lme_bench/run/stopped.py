"""What a stopped run (SIGTERM, Ctrl-C) leaves: summary.md and summary.json, marked stopped,
counting the sessions its ingestions stored, the calls, tokens and cost of the memory agent
and of the memory system's own model (as each session's checkpoint recorded them), and those
of the answers and verdicts made before the stop (as the progress line counted them).

Read from durable state alone: the ingestion checkpoints of the run's memories, opened
read-only (the threads still running write the store and the checkpoints; this writes only
the two summary files, each atomically, copied to the results URL of a run kept at one, with
no manifest: the run is not finished). It runs beside the stop, in a thread of its own, so a
slow disk or a locked file costs the stop no more than its grace: past the deadline the stop
says so in one line and exits as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lme_bench.config.settings import PriceSettings, Settings
from lme_bench.ingest.checkpoint import checkpointed_states
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.cost import Usage, priced
from lme_bench.results.ingest_table import ingest_totals
from lme_bench.results.run_mirror import publish_files
from lme_bench.results.run_summary import StoppedSummary, write_summary_json

LOCK_WAIT_S = 1.0  # at most this long on a writer's lock of the checkpoints


@dataclass(frozen=True)
class StoppedRun:
    """What the summary of a run stopped now needs, known once its memories are located."""

    run_id: str
    run_dir: Path
    checkpoints: Path
    memory_ids: tuple[str, ...]
    mode: str
    agent_model: str | None
    memory_model: str | None = None  # the memory system's own ([models] memory)
    prices: dict[str, PriceSettings] = field(default_factory=dict)
    # the calls and tokens of the answers and verdicts made so far (RunProgress's)
    answered: Callable[[], tuple[int, list[Usage]]] | None = None
    results_url: str | None = None  # the summary is copied there too (no manifest: unfinished)

    @classmethod
    def of(
        cls,
        settings: Settings,
        run_dir: Path,
        memory_ids: list[str],
        answered: Callable[[], tuple[int, list[Usage]]] | None = None,
    ) -> StoppedRun:
        return cls(
            run_id=run_dir.name,
            run_dir=run_dir,
            checkpoints=settings.run.results_dir / "checkpoints.sqlite",
            memory_ids=tuple(dict.fromkeys(memory_ids)),
            mode=settings.ingest.mode,
            agent_model=settings.models.agent if settings.ingest.mode != "raw" else None,
            memory_model=settings.models.memory,
            prices=dict(settings.prices),
            answered=answered,
            results_url=settings.run.results_url,
        )


_running: list[StoppedRun] = []  # the run of this process a stop would summarize, if any
_lock = threading.Lock()


def running(run: StoppedRun | None) -> None:
    """Name the run a stop would summarize (None: no run, or one whose summary is written)."""
    with _lock:
        _running[:] = [run] if run is not None else []


def current() -> StoppedRun | None:
    with _lock:
        return _running[0] if _running else None


def stopped_summary(run: StoppedRun, signal_name: str) -> dict[str, Any]:
    """summary.json of the stopped run: its ingestion totals, the cost of the memory agent's
    and the memory system's calls (None when a model has no price) and how it stopped."""
    states = checkpointed_states(run.checkpoints, list(run.memory_ids), run.mode, LOCK_WAIT_S)
    records = [record for _, record in states]
    ingestion = ingest_totals(records)
    ingestion["stored_sessions"] = sum(state == "done" for state, _ in states)
    ingestion["unfinished_sessions"] = len(records) - ingestion["stored_sessions"]
    usages = [Usage(run.agent_model or "", r.input_tokens, r.output_tokens) for r in records]
    own = Usage(
        run.memory_model or "the memory system's model",
        sum(r.system_input_tokens for r in records),
        sum(r.system_output_tokens for r in records),
    )
    usages.append(own)
    system = {
        "model": run.memory_model,
        "model_calls": sum(r.system_model_calls for r in records),
        "input_tokens": own.input_tokens,
        "output_tokens": own.output_tokens,
    }
    cost, unpriced = priced(usages, run.prices)
    answer_calls, answer_usages = run.answered() if run.answered else (0, [])
    answer_cost, answer_unpriced = priced(answer_usages, run.prices)
    unpriced = unpriced | answer_unpriced
    return {
        "stopped": {
            "signal": signal_name,
            "run_id": run.run_id,
            "memories": len(run.memory_ids),
            "resume": f"the same command resumes run {run.run_id}",
        },
        "ingestion": ingestion,
        "memory_system": system,
        "answers_and_verdicts": {
            "llm_calls": answer_calls,
            "input_tokens": sum(u.input_tokens for u in answer_usages),
            "output_tokens": sum(u.output_tokens for u in answer_usages),
        },
        "cost": {
            "ingestion": None if unpriced else cost,
            "answers_and_verdicts": None if unpriced else answer_cost,
            "total": None if unpriced else cost + answer_cost,
            "unpriced_models": sorted(unpriced),
            "counted": "the memory agent's and the memory system's own calls of the sessions"
            " checkpointed, and the reader's and judges' calls of the answers and verdicts made"
            " before the stop",
        },
    }


def stopped_line(summary: dict[str, Any]) -> str:
    """`Stopped by SIGTERM: N sessions stored, M model calls, T tokens, $C; the same command
    resumes run <id>`."""
    stopped, ingestion, cost = summary["stopped"], summary["ingestion"], summary["cost"]
    later = summary.get("answers_and_verdicts") or {}
    system = summary.get("memory_system") or {}
    calls = ingestion["llm_calls"] + later.get("llm_calls", 0) + system.get("model_calls", 0)
    tokens = ingestion["input_tokens"] + ingestion["output_tokens"]
    tokens += later.get("input_tokens", 0) + later.get("output_tokens", 0)
    tokens += system.get("input_tokens", 0) + system.get("output_tokens", 0)
    if cost["total"] is not None:
        spent = f"${cost['total']:.4f}"
    else:
        spent = "cost unknown (no [prices] for " + ", ".join(cost["unpriced_models"]) + ")"
    return (
        f"Stopped by {stopped['signal']}: {ingestion['stored_sessions']} sessions stored,"
        f" {calls} model calls, {tokens:,} tokens, {spent};"
        f" {stopped['resume']}"
    )


def stopped_markdown(summary: dict[str, Any]) -> str:
    ingestion, later = summary["ingestion"], summary["answers_and_verdicts"]
    system = summary["memory_system"]
    return (
        f"# lme-bench run {summary['stopped']['run_id']}: stopped\n\n"
        f"{stopped_line(summary)}\n\n"
        f"Counted from the ingestion checkpoints of the run's {summary['stopped']['memories']}"
        f" memories ({', '.join(ingestion['modes']) or 'no session'}):"
        f" {ingestion['stored_sessions']} sessions stored and"
        f" {ingestion['unfinished_sessions']} saved but not yet stored,"
        f" {ingestion['llm_calls']} memory agent model calls,"
        f" {ingestion['input_tokens']:,} input and {ingestion['output_tokens']:,} output tokens,"
        f" {system['model_calls']} calls of the memory system's own model,"
        f" {system['input_tokens']:,} input and {system['output_tokens']:,} output tokens;"
        f" the answers and verdicts made before the stop, {later['llm_calls']} reader and judge"
        f" calls, {later['input_tokens']:,} input and {later['output_tokens']:,} output tokens."
        " What was made is kept for"
        " the resumed run, which writes the full summary, the tables and report.html.\n"
    )


def write_stopped_summary(run: StoppedRun, signal_name: str) -> str:
    """summary.json, then summary.md, each atomically; the line that says what was spent."""
    summary = stopped_summary(run, signal_name)
    run.run_dir.mkdir(parents=True, exist_ok=True)
    write_summary_json(run.run_dir / "summary.json", StoppedSummary.model_validate(summary))
    write_text_atomically(run.run_dir / "summary.md", stopped_markdown(summary))
    written = [run.run_dir / "summary.json", run.run_dir / "summary.md"]
    publish_files(run.results_url, run.run_dir.parent, written)
    return stopped_line(summary)


class StopSummary:
    """The stopped run's summary being written in a daemon thread (the process exits at once
    after the stop, whatever the thread is doing)."""

    def __init__(self, run: StoppedRun, signal_name: str) -> None:
        self._run, self._signal = run, signal_name
        self._line: str | None = None
        self._thread = threading.Thread(target=self._write, name="stop-summary", daemon=True)
        self._thread.start()

    def _write(self) -> None:
        try:
            self._line = write_stopped_summary(self._run, self._signal)
        except Exception as exc:  # a summary left unwritten must not keep the stop waiting
            self._line = f"no summary of the stopped run written: {type(exc).__name__}: {exc}"

    def result(self, deadline: float) -> str:
        """The line to print, waiting until `deadline` (time.monotonic()) at most."""
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            waited = "it took longer than the stop's grace"
            return f"no summary of the stopped run written to {self._run.run_dir}: {waited}"
        return self._line or "no summary of the stopped run written"


def start_stop_summary(signal_name: str) -> StopSummary | None:
    """Begin writing the summary of this process's run, if one is running."""
    run = current()
    return StopSummary(run, signal_name) if run is not None else None
