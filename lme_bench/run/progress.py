"""The run's progress where the user is: one line of questions done per stage, failures, model
calls made and spend so far (calls in results taken from the cache or a checkpoint counted
apart), stages running, wall time elapsed and left. In a terminal the line is redrawn in place;
elsewhere (a log, CI, a deployment's worker) it is printed as a plain line at most every
`every_s` seconds, and always when the run ends. The scheduler's heartbeat (`tick`) shows it
from the moment the first stages start, before any of them finishes."""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from lme_bench.config.settings import PriceSettings
from lme_bench.report.labels import dollars
from lme_bench.results.cost import Usage, priced


def _made_here(value: Any) -> list[Any]:
    """An ingestion's session records made in this run: a session taken from a checkpoint
    (`resumed`) spent its calls in an earlier attempt."""
    return [r for r in getattr(value, "sessions", []) if not getattr(r, "resumed", False)]


def _usages(stage: str, value: Any, agent_model: str) -> Iterable[Usage]:
    """The model calls a finished stage made, as (model, tokens)."""
    if stage == "ingest":
        for record in _made_here(value):
            yield Usage(agent_model, record.input_tokens, record.output_tokens)
    elif stage == "answer":
        yield Usage(value.qa_model, value.input_tokens, value.output_tokens)
    elif stage == "judge":
        for row in value:
            if row.judge_kind == "llm":
                yield Usage(row.judge, row.input_tokens, row.output_tokens)


def _calls(stage: str, value: Any) -> int:
    if stage == "ingest":
        return sum(r.llm_calls for r in getattr(value, "sessions", []))
    if stage == "answer":
        return int(value.llm_calls)
    if stage == "judge":
        return sum(r.llm_calls for r in value)
    return 0


_DONE_VERBS = {
    "ingest": "ingested",
    "retrieval": "searched",
    "answer": "answered",
    "judge": "judged",
}


def progress_text(
    questions: int,
    done: int,
    failed: int = 0,
    reused: int = 0,
    *,
    builds: int | None = None,
    stage_done: Mapping[str, int] | None = None,
    running: Mapping[str, int] | None = None,
) -> str:
    """The progress artifact's words. A run whose questions share memory builds counts builds
    ingested apart from questions answered and judged ("builds ingested 3/10, questions
    answered 120/1,986, judged 96/1,986"); one where each question is its own build (a
    LongMemEval run) says only how many questions are done, its builds being its questions.
    `running`: task runs in flight by stage, named while any runs."""
    if builds is None or builds == questions or stage_done is None:
        text = f"{done} of {questions} questions done"
    else:
        parts, noun = [], "questions "
        for stage, count in stage_done.items():
            verb = _DONE_VERBS.get(stage, stage)
            if stage == "ingest":
                parts.append(f"builds {verb} {count:,}/{builds:,}")
            else:
                parts.append(f"{noun}{verb} {count:,}/{questions:,}")
                noun = ""
        text = ", ".join(parts)
    text += f", {failed} failed" if failed else ""
    text += f" ({reused} stage results from the cache)" if reused else ""
    busy = [f"{stage} {n}" for stage, n in (running or {}).items() if n]
    return text + (f"; running: {', '.join(busy)}" if busy else "")


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class RunProgress:
    def __init__(
        self,
        total: int,
        stages: Iterable[str],
        prices: dict[str, PriceSettings],
        *,
        agent_model: str | None = None,
        out: TextIO | None = None,
        every_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        builds: int | None = None,
    ) -> None:
        """`total` questions asking `builds` memory builds (None: one per question): the
        ingest count is of builds, every other stage's of questions."""
        self.total, self.stages, self.prices = total, list(stages), prices
        self.builds = builds if builds is not None and builds != total else None
        self.agent_model = agent_model or ""
        self.out = out or sys.stderr
        self.every_s, self.clock = every_s, clock
        self.started = clock()
        self.done: Counter[str] = Counter()
        self.calls = 0  # made in this run
        self.calls_reused = 0  # in results taken from the cache or a checkpoint
        self.usages: list[Usage] = []
        self.calls_by_stage: Counter[str] = Counter()  # made in this run
        self.usages_by_stage: dict[str, list[Usage]] = {}
        self.failed = 0
        self.questions_done = 0
        self.running: dict[str, int] = {}  # task runs in flight by stage (the scheduler's)
        self._printed_at: float | None = None
        self._tty = bool(getattr(self.out, "isatty", lambda: False)())

    def record(self, stage: str, value: Any, *, from_cache: bool = False) -> None:
        """A stage of one question (an ingestion: of one build) finished (`value`: its
        result, None when it failed; `from_cache`: taken from the task cache, its calls made
        by an earlier run). Calls and spend count only the calls this run made."""
        self.done[stage] += 1
        if value is None:
            return
        calls = _calls(stage, value)
        made = 0 if from_cache else calls
        if stage == "ingest" and not from_cache:
            made = sum(r.llm_calls for r in _made_here(value))
        self.calls += made
        self.calls_by_stage[stage] += made
        self.calls_reused += calls - made
        if not from_cache:
            usages = list(_usages(stage, value, self.agent_model))
            self.usages += usages
            self.usages_by_stage.setdefault(stage, []).extend(usages)

    def made_after_ingestion(self) -> tuple[int, list[Usage]]:
        """The calls and tokens this run's answers and verdicts made so far (a stopped run's
        ingestion is counted from its checkpoints instead)."""
        stages = ("answer", "judge")
        calls = sum(self.calls_by_stage[stage] for stage in stages)
        return calls, [u for stage in stages for u in self.usages_by_stage.get(stage, [])]

    def update(self, questions_done: int, failed: int) -> None:
        self.questions_done, self.failed = questions_done, failed
        self.show()

    def tick(self, running: Mapping[str, int]) -> None:
        """The scheduler's heartbeat while stages run (`running`: task runs in flight by
        stage): a line as soon as work starts and every `every_s` seconds while none
        finishes, so a run whose first ingestion takes minutes shows that it is under way."""
        self.running = {stage: n for stage, n in running.items() if n}
        self.show()

    def line(self) -> str:
        parts = [f"{self.questions_done}/{self.total} questions"]
        parts.append(" ".join(self._stage_done(s) for s in self.stages))
        if self.failed:
            parts.append(f"{self.failed} failed")
        reused = f" ({self.calls_reused} more in earlier results)" if self.calls_reused else ""
        parts.append(f"{self.calls} model calls{reused}")
        cost, unpriced = priced(self.usages, self.prices)
        if self.prices and not unpriced:
            parts.append(f"spent {dollars(cost)}")
        elapsed = self.clock() - self.started
        left, done = "", self.questions_done
        if 0 < done < self.total:
            left = f", ~{_clock(elapsed * (self.total - done) / done)} left"
        parts.append(f"{_clock(elapsed)} wall{left}")
        return " | ".join(parts)

    def _stage_done(self, stage: str) -> str:
        if stage == "ingest" and self.builds is not None:
            done = f"ingest {self.done[stage]}/{self.builds} builds"
        else:
            done = f"{stage} {self.done[stage]}"
        running = self.running.get(stage)
        return f"{done} ({running} running)" if running else done

    def show(self, final: bool = False) -> None:
        if final:
            self.running = {}  # nothing runs once the run ends
        now = self.clock()
        if self._tty:
            self.out.write("\r\x1b[2K" + self.line() + ("\n" if final else ""))
            self.out.flush()
            return
        due = self._printed_at is None or now - self._printed_at >= self.every_s
        if final or due:
            self._printed_at = now
            print(self.line(), file=self.out, flush=True)
