"""The batch jobs of a run, whatever their stage: one look at each still running (the judge's
through its judges' providers, the answers' through the QA model's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lme_bench.config.settings import Settings
from lme_bench.judge import batch_job_stage as judge_batch
from lme_bench.judge.panel import judge_model_specs
from lme_bench.qa import batch_job_stage as answer_batch
from lme_bench.results.batch_jobs import BatchJob, read_jobs, refresh_job


def refresh(jobs: Sequence[BatchJob], settings: Settings, run_dir: Path) -> bool:
    """Look once at every job still running; whether all have ended."""
    ended = True
    judge_specs = judge_model_specs(settings)
    for job in jobs:
        if job.state != "running":
            continue
        if job.stage == judge_batch.STAGE:
            ended &= judge_batch.refresh_by_specs([job], judge_specs, settings, run_dir)
        elif job.stage == answer_batch.STAGE:
            api = answer_batch.openai_batch_api(answer_batch.reader_spec(settings), settings)
            ended &= refresh_job(run_dir, job, api)
        else:
            raise ValueError(f"{run_dir}: a batch job of unknown stage {job.stage!r}")
    return ended


def running_jobs(run_dir: Path) -> list[BatchJob]:
    return [job for job in read_jobs(run_dir) if job.state == "running"]


def poll_seconds(jobs: Sequence[BatchJob], settings: Settings) -> float:
    """How long to wait before looking again: the shortest interval of the jobs' stages."""
    by_stage = {
        judge_batch.STAGE: settings.judge.batch_poll_s,
        answer_batch.STAGE: settings.qa.batch_poll_s,
    }
    return min((by_stage[job.stage] for job in jobs if job.stage in by_stage), default=60.0)
