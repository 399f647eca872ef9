"""What follows what for one question, and gathering each stage's results into RunResults.

ingest -> retrieval and answer (each when the run has that stage) -> judge. When a stage fails,
its question records the first error and the stages after it do not run; the retrieval and
hypotheses tables still get an error row, so they have a row for every question.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from lme_bench.common.secrets import redact_secrets
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.question import MemoryLocation
from lme_bench.qa.stage import unanswered_row
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval.official_ids import RetrievalRow
from lme_bench.run.finish import RunResults
from lme_bench.run.steps import StageFailed, error_rows


@dataclass(frozen=True, slots=True)
class Job:
    stage: str
    index: int  # the question's position in the run
    upstream: Any  # what the stage is given: memory location, ingestion, hypothesis


@dataclass(frozen=True, slots=True)
class Done:
    job: Job
    value: Any  # the task's result, or None when it failed
    error: BaseException | str | None


def error_text(error: BaseException | str | None) -> str:
    if isinstance(error, BaseException):
        return redact_secrets("".join(traceback.format_exception_only(error)).strip())
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
        self._outcomes: dict[int, Any] = {}
        self._retrieval: dict[int, list[RetrievalRow]] = {}
        self._hypotheses: dict[int, HypothesisRow] = {}
        self._scores: dict[int, list[ScoreRow]] = {}
        self._outstanding = [1] * len(refs)  # each question starts with its ingest job

    @property
    def questions_done(self) -> int:
        return sum(1 for n in self._outstanding if n == 0)

    def start(self, locations: dict[str, MemoryLocation]) -> list[Job]:
        """Every question's ingest job, the longest first: a long question started last
        would keep the run waiting on it alone."""
        jobs = [Job("ingest", i, locations[r.question_id]) for i, r in enumerate(self.refs)]
        return sorted(jobs, key=lambda job: self._ingest_work(self.refs[job.index]), reverse=True)

    def ingestion_id(self, index: int) -> str:
        """The ingestion that filled question `index`'s memory ("" before it is known)."""
        outcome = self._outcomes.get(index)
        return str(outcome.ingestion_id) if outcome is not None else ""

    def _ingest_work(self, ref: QuestionRef) -> int:
        """Model calls of a context-only ingestion follow sessions; the others follow turns."""
        return ref.n_sessions if self.settings.ingest.mode == "context-only" else ref.n_turns

    def _fail(self, index: int, error: BaseException | str | None) -> None:
        self.failed.setdefault(self.refs[index].question_id, error_text(error))

    def finished(self, done: Done) -> list[Job]:
        """Record a finished job; the jobs that follow it."""
        job, value, index = done.job, done.value, done.job.index
        ref = self.refs[index]
        rows: Any = done.error.rows if isinstance(done.error, StageFailed) else None
        if done.error is not None:
            self._fail(index, done.error)
        follow: list[Job] = []
        if job.stage == "ingest":
            if value is not None:
                self._outcomes[index] = value
                follow = [Job(s, index, value) for s in ("retrieval", "answer") if s in self.stages]
                if "answer" not in self.stages and "judge" in self.stages:
                    existing = self.existing.get(ref.question_id)
                    follow += [Job("judge", index, existing)] if existing else []
            else:
                error = self.failed[ref.question_id]
                if "retrieval" in self.stages:
                    self._retrieval[index] = error_rows(ref, error)
                if "answer" in self.stages:
                    self._hypotheses[index] = unanswered_row(
                        ref, self.settings, f"not answered: ingestion failed: {error}"
                    )
        elif job.stage == "retrieval":
            found = value if value is not None else error_rows(ref, error_text(done.error))
            self._retrieval[index] = found
        elif job.stage == "answer":
            if value is None and rows is None:
                rows = unanswered_row(ref, self.settings, error_text(done.error))
            self._hypotheses[index] = value if value is not None else rows
            if value is not None and "judge" in self.stages:
                follow = [Job("judge", index, value)]
        elif job.stage == "judge":
            scores = value if value is not None else rows
            if scores is not None:
                self._scores[index] = scores
        self._outstanding[index] += len(follow) - 1
        return follow

    def results(self) -> RunResults:
        def ordered(found: dict[int, Any]) -> list[Any]:
            return [found[i] for i in sorted(found)]

        results = RunResults(outcomes=ordered(self._outcomes), failed=self.failed)
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
