"""The judge stage of a run, on answers read from a file: the run's judges (built once), each
question judged by the run's own `judge_question` with the retries a judge task gets
(lme_bench.run.batch.run_each), `[limits] judge` questions at a time and every model call
under its provider's limits; or, with `[judge] batch = true`, through the provider's batch API
exactly as a run sends it (lme_bench.judge.batch_job_stage.judge_in_batch_jobs)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lme_bench.judge.batch_job_stage import JudgeItem, judge_in_batch_jobs
from lme_bench.judge.panel import JudgePanel
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.run.batch import run_each
from lme_bench.run.failure_origin import exception_text
from lme_bench.run.steps import StageFailed, judge_question, require_ok
from lme_bench.run.transient import scrubbed


@dataclass
class Judged:
    """Every question's score rows, and the first error of each question whose judging failed
    (its rows, a judge-error among them, are kept as a run keeps them)."""

    scores: list[ScoreRow] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def add(
        self, question_id: str, rows: list[ScoreRow] | None, error: BaseException | None
    ) -> None:
        if isinstance(error, StageFailed) and isinstance(error.rows, list):
            rows = error.rows
        self.scores.extend(rows or [])
        if error is not None:
            self.failed.setdefault(question_id, exception_text(error))


def _one(item: JudgeItem, judges: JudgePanel) -> list[ScoreRow]:
    """One question's rows, as the run's judge task makes them: a failed call is StageFailed
    carrying the rows; an error whose text holds a secret comes back masked."""
    try:
        rows = asyncio.run(judge_question(item.ref, item.hypothesis, judges))
    except Exception as exc:
        clean = scrubbed(exc, judges.settings)
        if clean is exc:
            raise
        raise clean from None
    return require_ok(rows)


def _describe(item: JudgeItem) -> str:
    return f"judge {item.ref.question_id} ({item.ref.question_type})"


def judge_each(items: Sequence[JudgeItem], judges: JudgePanel) -> Judged:
    """Call by call: `[limits] judge` questions at a time, each retried on transient faults."""
    judged = Judged()

    def work(item: JudgeItem) -> list[ScoreRow]:
        return _one(item, judges)

    def one(item: JudgeItem) -> tuple[list[ScoreRow] | None, BaseException | None]:
        (outcome,) = run_each([item], work, describe=_describe)
        return outcome.value, outcome.error

    with ThreadPoolExecutor(max_workers=judges.settings.limits.judge) as pool:
        found = list(pool.map(one, items))
    for item, (rows, error) in zip(items, found, strict=True):
        judged.add(item.ref.question_id, rows, error)
    return judged


def judge_batch(items: Sequence[JudgeItem], judges: JudgePanel, run_dir: Path) -> Judged:
    """Through the batch API: one job per provider (found again in `run_dir` when a score
    of the same requests was interrupted), what the job did not answer judged call by call."""
    judged = Judged()
    found = judge_in_batch_jobs(items, judges, run_dir)
    for item in items:
        rows = found[item.ref.question_id]
        try:
            judged.add(item.ref.question_id, require_ok(rows), None)
        except StageFailed as failed:
            judged.add(item.ref.question_id, None, failed)
    return judged


def judge_answers(items: Sequence[JudgeItem], judges: JudgePanel, run_dir: Path) -> Judged:
    if judges.settings.judge.batch:
        return judge_batch(items, judges, run_dir)
    return judge_each(items, judges)
