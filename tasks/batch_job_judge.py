"""Prefect tasks of the judge stage through a provider's batch jobs
(lme_bench.judge.batch_job_stage): start (or find) the run's jobs, then collect the rows once
they have ended. Each question whose rows are all fine is persisted under the key its
per-question judge task would use, so a rerun finds it in the cache whichever way it was
judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench_tasks.result_cache import StageCache, stage_key
from prefect import Task, task
from prefect.cache_policies import NO_CACHE

from lme_bench.judge import batch_job_stage
from lme_bench.judge.batch_job_stage import JudgeItem
from lme_bench.judge.panel import JudgePanel
from lme_bench.results.batch_jobs import BatchJob
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.run.steps import StageFailed, require_ok


@task(
    name="judge-batch-start",
    cache_policy=NO_CACHE,
    persist_result=False,
    retries=2,
    retry_delay_seconds=10,
)
def start_judge_jobs(items: list[JudgeItem], judges: JudgePanel, run_dir: Path) -> list[BatchJob]:
    return batch_job_stage.start_jobs(items, judges, run_dir)


@task(
    name="judge-batch-collect",
    cache_policy=NO_CACHE,
    persist_result=False,
    retries=2,
    retry_delay_seconds=10,
)
def collect_judge_scores(
    items: list[JudgeItem],
    jobs: list[BatchJob],
    judges: JudgePanel,
    run_dir: Path,
    scope: str,
    ingestion_ids: dict[str, str],
    per_question: Task[Any, Any],
) -> dict[str, list[ScoreRow]]:
    """Every question's rows; those without a failure kept in the per-question cache."""
    found = batch_job_stage.collect_scores(items, jobs, judges, run_dir)
    settings = judges.settings  # what the per-question judge task's key hashes
    kept = []
    for item in items:
        rows = found[item.ref.question_id]
        try:
            require_ok(rows)
        except StageFailed:
            continue
        ingestion_id = ingestion_ids.get(item.ref.question_id)
        key = stage_key("judge", item.ref, settings, scope, item.hypothesis, ingestion_id)
        kept.append((key, rows))
    StageCache(per_question).keep(kept)
    return found
