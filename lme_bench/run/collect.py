"""What follows what for one question, and gathering each stage's results into RunResults.

ingest -> retrieval and answer (each when the run has that stage) -> judge. Ingestion is per
memory build (`QuestionRef.build`): one ingest job per distinct build, run for the first
question asking it, after which every question of the build goes on; so one memory is never
ingested twice, nor by two jobs at once, in a run. When a stage fails, its question (for an
ingestion: every question of the build) records the first error and the stages after it do
not run; the retrieval and hypotheses tables still get an error row, so they have a row for
every question.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar, TypeVar, cast

from lme_bench.common.secrets import redact_secrets
from lme_bench.common.stop_signal import RunStopped
from lme_bench.config.run_section import Stage
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.qa.stage import unanswered_row
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval.official_ids import RetrievalRow
from lme_bench.run.failure_origin import exception_text, log_failure, raised_at, with_origin
from lme_bench.run.finish import RunResults
from lme_bench.run.steps import StageFailed, error_rows

T = TypeVar("T")
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IngestJob:
    index: int  # the position in the run of the first question asking the build
    location: MemoryLocation
    stage: ClassVar[Stage] = "ingest"

    @property
    def upstream(self) -> MemoryLocation:
        return self.location


@dataclass(frozen=True, slots=True)
class RetrievalJob:
    index: int
    outcome: IngestOutcome
    stage: ClassVar[Stage] = "retrieval"

    @property
    def upstream(self) -> IngestOutcome:
        return self.outcome


@dataclass(frozen=True, slots=True)
class AnswerJob:
    index: int
    outcome: IngestOutcome
    stage: ClassVar[Stage] = "answer"

    @property
    def upstream(self) -> IngestOutcome:
        return self.outcome


@dataclass(frozen=True, slots=True)
class JudgeJob:
    index: int
    hypothesis: HypothesisRow
    stage: ClassVar[Stage] = "judge"

    @property
    def upstream(self) -> HypothesisRow:
        return self.hypothesis


Job = IngestJob | RetrievalJob | AnswerJob | JudgeJob
# What each stage's task returns: an ingestion, retrieval rows, a hypothesis, score rows.
StageValue = IngestOutcome | list[RetrievalRow] | HypothesisRow | list[ScoreRow]


@dataclass(frozen=True, slots=True)
class Done:
    job: Job
    value: StageValue | None  # None when the task failed
    error: BaseException | str | None
    from_cache: bool = False  # the task cache's result of an earlier run (no task run)


def _expect(value: StageValue | None, kind: type[T]) -> T | None:
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__} from the stage, got {type(value).__name__}")
    return value


def error_text(error: BaseException | str | None) -> str:
    """A failed question's `error`: the exception, and where it was raised (file:line)."""
    if isinstance(error, BaseException):
        return redact_secrets(with_origin(exception_text(error), error))
    return redact_secrets(str(error or "failed"))


class RunCollector:
    """Starts each question at ingest and gathers what every stage returns."""

    def __init__(
        self,
        refs: list[QuestionRef],
        settings: Settings,
        existing_hypotheses: dict[str, HypothesisRow] | None = None,
    ) -> None:
        self.refs = refs
        self.settings = settings
        self.stages = settings.stages
        self.existing = existing_hypotheses or {}
        self.failed: dict[str, str] = {}
        self.failed_stage: dict[str, str] = {}  # question id -> the stage that failed first
        self._traceback_of: dict[tuple[str, str | None], str] = {}  # failure -> first question
        self._outcomes: dict[int, IngestOutcome] = {}
        self._retrieval: dict[int, list[RetrievalRow]] = {}
        self._hypotheses: dict[int, HypothesisRow] = {}
        self._scores: dict[int, list[ScoreRow]] = {}
        self._outstanding = [1] * len(refs)  # each question starts with its build's ingest job
        self._askers: dict[str, list[int]] = {}  # build -> positions of its questions
        for i, ref in enumerate(refs):
            self._askers.setdefault(ref.build, []).append(i)
        self._build_outcomes: dict[str, IngestOutcome] = {}
        self._locations: dict[str, MemoryLocation] = {}

    @property
    def builds(self) -> int:
        """Distinct memory builds the run's questions ask."""
        return len(self._askers)

    @property
    def questions_done(self) -> int:
        return sum(1 for n in self._outstanding if n == 0)

    def start(self, locations: dict[str, MemoryLocation]) -> list[Job]:
        """One ingest job per build (`locations` is keyed by build), the longest first: a
        long build started last would keep the run waiting on it alone."""
        self._locations = dict(locations)
        jobs = [IngestJob(asking[0], locations[build]) for build, asking in self._askers.items()]
        jobs.sort(key=lambda job: self._ingest_work(self.refs[job.index]), reverse=True)
        return list(jobs)

    def ingestion_id(self, index: int) -> str:
        """The ingestion that filled question `index`'s memory ("" before it is known)."""
        outcome = self._build_outcomes.get(self.refs[index].build)
        return outcome.ingestion_id if outcome is not None else ""

    def _ingest_work(self, ref: QuestionRef) -> int:
        """Model calls of a context-only ingestion follow sessions; the others follow turns."""
        return ref.n_sessions if self.settings.ingest.mode == "context-only" else ref.n_turns

    def _fail(self, index: int, stage: str, error: BaseException | str | None) -> None:
        question_id = self.refs[index].question_id
        if question_id in self.failed:
            return
        self.failed[question_id] = error_text(error)
        self.failed_stage[question_id] = stage
        if isinstance(error, BaseException) and not isinstance(error, StageFailed | RunStopped):
            message = f"question {question_id} failed: {self.failed[question_id]}"
            # one traceback per kind of failure: the questions after the first point to it
            first = self._traceback_of.setdefault(
                (type(error).__name__, raised_at(error)), question_id
            )
            if first == question_id:
                log_failure(_log, message, error)
            else:
                _log.error("%s (traceback as for question %s)", message, first)

    def finished(self, done: Done) -> list[Job]:
        """Record a finished job; the jobs that follow it."""
        job, index = done.job, done.job.index
        if done.error is not None:
            self._fail(index, job.stage, done.error)
        kept = done.error.rows if isinstance(done.error, StageFailed) else None
        follow: list[Job] = []
        match job:
            case IngestJob():
                return self._build_ingested(index, _expect(done.value, IngestOutcome), done)
            case RetrievalJob():
                if isinstance(done.value, list):
                    self._retrieval[index] = cast(list[RetrievalRow], done.value)
                else:
                    self._retrieval[index] = error_rows(self.refs[index], error_text(done.error))
            case AnswerJob():
                hypothesis = _expect(done.value, HypothesisRow)
                if hypothesis is not None:
                    self._hypotheses[index] = hypothesis
                    follow = [JudgeJob(index, hypothesis)] if "judge" in self.stages else []
                elif isinstance(kept, HypothesisRow):
                    self._hypotheses[index] = kept
                else:
                    self._hypotheses[index] = unanswered_row(
                        self.refs[index], self.settings, error_text(done.error)
                    )
            case JudgeJob():
                scores = done.value if isinstance(done.value, list) else kept
                if isinstance(scores, list):
                    self._scores[index] = cast(list[ScoreRow], scores)
        self._outstanding[index] += len(follow) - 1
        return follow

    def _build_ingested(self, lead: int, outcome: IngestOutcome | None, done: Done) -> list[Job]:
        """Every question of the build goes on from its ingestion (or fails with it)."""
        build = self.refs[lead].build
        if outcome is not None:
            self._build_outcomes[build] = outcome
            self._outcomes[lead] = outcome  # one ingestion row set per build
        follow: list[Job] = []
        for index in self._askers[build]:
            if done.error is not None:
                self._fail(index, "ingest", done.error)
            found = self._ingested(index, outcome)
            self._outstanding[index] += len(found) - 1
            follow += found
        return follow

    def _ingested(self, index: int, outcome: IngestOutcome | None) -> list[Job]:
        ref = self.refs[index]
        if outcome is not None:
            follow: list[Job] = []
            if "retrieval" in self.stages:
                follow.append(RetrievalJob(index, outcome))
            if "answer" in self.stages:
                follow.append(AnswerJob(index, outcome))
            elif "judge" in self.stages and ref.question_id in self.existing:
                follow.append(JudgeJob(index, self.existing[ref.question_id]))
            return follow
        error = self.failed[ref.question_id]
        if "retrieval" in self.stages:
            self._retrieval[index] = error_rows(ref, error)
        if "answer" in self.stages:
            self._hypotheses[index] = unanswered_row(
                ref, self.settings, f"not answered: ingestion failed: {error}"
            )
        return []

    def results(self) -> RunResults:
        def ordered(found: dict[int, T]) -> list[T]:
            return [found[i] for i in sorted(found)]

        results = RunResults(outcomes=ordered(self._outcomes), failed=self.failed)
        results.unfinished_memories = {  # builds whose ingestion failed or never finished
            location.memory_id: build
            for build, location in self._locations.items()
            if build not in self._build_outcomes and location.memory_id
        }
        if "retrieval" in self.stages:
            results.retrieval = [row for rows in ordered(self._retrieval) for row in rows]
        if "answer" in self.stages:
            results.hypotheses = ordered(self._hypotheses)
        elif "judge" in self.stages:
            results.hypotheses = [
                self.existing[r.question_id] for r in self.refs if r.question_id in self.existing
            ]
        if "judge" in self.stages:
            results.scores = [row for rows in ordered(self._scores) for row in rows]
        return results
