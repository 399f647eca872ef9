"""A look at a run's batch jobs, whatever their stage (lme_bench.run.batch_job_watch)."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from lme_bench.config.settings import Settings
from lme_bench.results.batch_jobs import BatchJob
from lme_bench.run import batch_job_watch


@task(
    name="batch-check",
    cache_policy=NO_CACHE,
    persist_result=False,
    retries=2,
    retry_delay_seconds=10,
)
def check_batch_jobs(jobs: list[BatchJob], settings: Settings, run_dir: Path) -> bool:
    return batch_job_watch.refresh(jobs, settings, run_dir)
