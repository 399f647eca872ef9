"""The Prefect flow's own cost: concurrency efficiency at simulated model latency, a cached
rerun against the first run, and overhead per task and per question.

    python perf/prefect_flow.py --questions 500 --latency 0.2 --concurrency 16

On generated S-scale data, with the scripted fake models slowed to --latency seconds a call
(a [providers.slow] of kind "fake"), against one local Prefect server:
  1. the first run: context-only ingestion, answers and judging, all through the slow model,
     at most --concurrency calls in flight (the provider's limit; retrieval, answer and judge
     stages likewise) and --ingest questions ingesting at once: its wall time against the
     ideal model calls x latency / concurrency;
  2. a rerun of the same run id: every stage result comes from the cache (after --settle
     seconds: a Prefect server on SQLite digests a big run's events for a while after it);
  3. answering and judging again after a QA setting changed (ingestion cached): their span
     (first answer start to last judge end, from the task runs) against the same ideal;
  4. Prefect's cost per task: --serial-questions answered and judged once more, one task at a
     time, through the flow and then by calling the same core functions directly.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support import ROOT

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import pyarrow.parquet as pq

from lme_bench.dataset.generate import generate_dataset
from lme_bench.providers.fake_stats import FAKE_CALLS

CONFIG = """
[providers.slow]
kind = "fake"
latency_s = {latency}

[limits]
ingest = {ingest}
retrieval = {concurrency}
answer = {concurrency}
judge = {concurrency}

[limits.providers.slow]
concurrency = {concurrency}

[ingest]
mode = "context-only"

[models]
agent = "slow:note-taker"
qa = "slow:quote-memory"
judge = "slow:match-judge"

[judge]
fallback = false

[cache]
scope = "shared"  # a QA sweep under a new run id reuses the ingestion (step 3)
"""


def _request(
    config: Path,
    data: Path,
    results: Path,
    limit: int | None = None,
    run_id: str = "bench",
    **overrides: Any,
) -> Any:
    from lme_bench.run.request import RunRequest

    return RunRequest(
        config=str(config),
        dataset=str(data),
        results_dir=str(results),
        run_id=run_id,
        limit=limit,
        overrides=overrides,
    )


class BusySlots:
    """The fake model calls in flight while it watches, sampled every 10 ms: their mean from
    the first call on, and (`trace`) their mean in each second of the run."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self.seconds: list[list[int]] = []  # the samples of each second since it began
        self.first_call_s: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        started = time.perf_counter()
        while not self._stop.wait(0.01):
            now, n = time.perf_counter() - started, FAKE_CALLS.in_flight
            while len(self.seconds) <= int(now):
                self.seconds.append([])
            self.seconds[int(now)].append(n)
            if n and self.first_call_s is None:
                self.first_call_s = now
            if self.samples or n:
                self.samples.append(n)

    def trace(self) -> str:
        means = (f"{sum(s) / len(s):.0f}" if s else "-" for s in self.seconds)
        return f"first call at {self.first_call_s or 0:.2f} s; per second: {' '.join(means)}"

    def __enter__(self) -> BusySlots:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples) if self.samples else 0.0


def _run(
    config: Path, data: Path, results: Path, run_id: str = "bench", **overrides: Any
) -> tuple[float, str]:
    from lme_bench_flows.benchmark import benchmark

    request = _request(config, data, results, None, run_id, **overrides)
    started = time.perf_counter()
    benchmark(request)
    return time.perf_counter() - started, str(results / run_id)


def _task_runs(name_prefixes: tuple[str, ...], since: float, expected: int) -> list[Any]:
    """The finished task runs so named, once all `expected` have their end time recorded
    (states reach the server as events, a moment after the flow returns)."""
    deadline = time.monotonic() + 60
    while True:
        found = _read_task_runs(name_prefixes, since)
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(1)


def _read_task_runs(name_prefixes: tuple[str, ...], since: float) -> list[Any]:
    from datetime import UTC, datetime

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterStartTime

    after = datetime.fromtimestamp(since, UTC)
    runs: list[Any] = []
    with get_client(sync_client=True) as client:
        while True:
            page = client.read_task_runs(
                task_run_filter=TaskRunFilter(start_time=TaskRunFilterStartTime(after_=after)),
                limit=200,
                offset=len(runs),
            )
            runs += page
            if len(page) < 200:
                break
    return [r for r in runs if r.name.startswith(name_prefixes) and r.start_time and r.end_time]


def _calls(run_dir: str, tables: tuple[str, ...] = ("hypotheses", "scores")) -> int:
    found = (pq.read_table(f"{run_dir}/{t}.parquet").column("llm_calls") for t in tables)
    return int(sum(sum(column.to_pylist()) for column in found))


def _qa_span(since: float, questions: int) -> float:
    """First answer start to last judge end, from the task runs."""
    spans = _task_runs(("answer ", "judge "), since, 2 * questions)
    return float(
        (max(r.end_time for r in spans) - min(r.start_time for r in spans)).total_seconds()
    )


def _serial_answers(config: Path, data: Path, results: Path, questions: int) -> tuple[float, float]:
    """Seconds to answer and judge `questions` one task at a time through the flow's own
    tasks, and by calling the same core functions directly: Prefect's cost is the gap."""
    import asyncio

    from lme_bench_tasks.benchmark import per_question_tasks
    from prefect import flow
    from prefect.utilities.annotations import quote

    from lme_bench.run import cache_keys, steps

    settings = _request(config, data, results, questions, **{"qa.top_ke": 8}).settings()
    _, refs = steps.prepare_questions(steps.plan_run(settings), None, questions)
    scope = cache_keys.memory_scope(settings, "bench")
    located = asyncio.run(steps.locate_memories([r.question_id for r in refs], settings, scope))
    outcomes = {
        q: steps.IngestOutcome(q, at.memory_id, at.entries, 0.0) for q, at in located.items()
    }

    qa, judges = steps.qa_panel(settings), steps.judge_panel(settings)

    @flow(name="serial-tasks")
    def through_tasks() -> float:
        found = per_question_tasks(settings)
        answer, judge = (found[s].with_options(refresh_cache=True) for s in ("answer", "judge"))
        started = time.perf_counter()
        for ref in refs:  # arguments quote()d, as the flow passes them
            given = {"ref": quote(ref), "settings": quote(settings), "scope": scope}
            outcome = quote(outcomes[ref.question_id])
            hypothesis = answer.submit(outcome=outcome, qa=quote(qa), **given).result()
            judge.submit(
                hypothesis=quote(hypothesis), ingestion_id="", judges=quote(judges), **given
            ).result()
        return time.perf_counter() - started

    flow_s = through_tasks()
    started = time.perf_counter()
    for ref in refs:
        memory_id = outcomes[ref.question_id].memory_id
        hypothesis = asyncio.run(steps.answer_question(ref, memory_id, qa))
        asyncio.run(steps.judge_question(ref, hypothesis, judges))
    return flow_s, time.perf_counter() - started


@contextmanager
def temporary_server() -> Iterator[None]:
    """A temporary Prefect server, run as `lme-bench run` runs its own: no flow run heartbeats
    (they serve a lasting server), and answering a first flow run before any is timed (a
    lasting server, as users run the flow against, has long done so)."""
    import prefect.settings as prefect_settings
    from prefect import flow
    from prefect.testing.utilities import prefect_test_harness

    no_heartbeats = {prefect_settings.PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}

    @flow(name="warm-up")
    def warm_up() -> None:
        """Nothing: a first flow run for the server to answer."""

    with prefect_test_harness(), prefect_settings.temporary_settings(updates=no_heartbeats):
        warm_up()
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500, help="500: a whole S run")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--ingest",
        type=int,
        help="questions ingesting at once (default: 4 x --concurrency, so once the last has "
        "started enough are left to keep the slots busy while they end)",
    )
    parser.add_argument("--serial-questions", type=int, default=16)
    parser.add_argument(
        "--trace",
        action="store_true",
        help="also print the first run's calls in flight, second by second",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=30.0,
        help="seconds between runs, for the server to "
        "digest the last run's events (it does, at full CPU, for a while after a big run)",
    )
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    args = parser.parse_args()
    ingest = args.ingest or 4 * args.concurrency

    data = args.data_dir / f"lme_s_{args.questions}_seed0.json"
    if not data.exists():
        generate_dataset(data, n_questions=args.questions, scale="s", seed=0)
    with tempfile.TemporaryDirectory(prefix="lme-bench-") as tmp, temporary_server():
        config = Path(tmp) / "bench.toml"
        config.write_text(
            CONFIG.format(latency=args.latency, concurrency=args.concurrency, ingest=ingest)
        )
        results = Path(tmp) / "results"
        FAKE_CALLS.reset()
        with BusySlots() as busy:
            first_s, run_dir = _run(config, data, results)
        first_peak = FAKE_CALLS.max_in_flight
        sessions = pq.read_table(f"{run_dir}/ingest.parquet").num_rows
        first_calls = _calls(run_dir, ("ingest", "hypotheses", "scores"))
        time.sleep(args.settle)
        cached_s, _ = _run(config, data, results)
        time.sleep(args.settle)
        marker = time.time()
        FAKE_CALLS.reset()
        again_s, run_dir = _run(config, data, results, "bench-qa", **{"qa.top_ke": 9})
        in_flight = FAKE_CALLS.max_in_flight
        qa_span = _qa_span(marker, args.questions)
        qa_calls = _calls(run_dir)
        time.sleep(args.settle)
        flow_s, direct_s = _serial_answers(config, data, results, args.serial_questions)
    per_task = (flow_s - direct_s) / (2 * args.serial_questions)
    ideal = first_calls * args.latency / args.concurrency
    qa_ideal = qa_calls * args.latency / args.concurrency
    print(f"| questions | {args.questions} ({sessions} sessions) |")
    print(
        f"| first run, all stages ({first_calls} calls, concurrency {args.concurrency}, "
        f"ingest {ingest}) | {first_s:.1f} s vs ideal {ideal:.1f} s = {first_s / ideal:.2f}x, "
        f"at most {first_peak} calls in flight, {busy.mean:.1f} on average from the first |"
    )
    if args.trace:
        print(f"| first run, calls in flight | {busy.trace()} |")
    print(f"| cached rerun | {cached_s:.2f} s = {100 * cached_s / first_s:.1f}% of the first |")
    print(
        f"| answer + judge again ({qa_calls} calls) | {qa_span:.2f} s vs ideal {qa_ideal:.2f} s "
        f"= {qa_span / qa_ideal:.2f}x, at most {in_flight} calls in flight (run {again_s:.1f} s) |"
    )
    print(
        f"| {args.serial_questions} questions answered + judged one task at a time | flow "
        f"{flow_s:.2f} s, direct {direct_s:.2f} s: Prefect {1000 * per_task:.0f} ms a task, "
        f"{4000 * per_task:.0f} ms a question (4 stages) |"
    )


if __name__ == "__main__":
    main()
