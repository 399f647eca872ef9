"""Prefect tasks of the answer stage through a provider's batch API (lme_bench.qa.batch_job_stage):
take the reader requests (after each question's search), start (or find) the job, then answer
from its replies. Each question answered without a failure is persisted under the key its
per-question answer task would use, so a rerun finds it in the cache either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench_tasks.result_cache import StageCache, stage_key
from prefect import Task, task
from prefect.cache_policies import NO_CACHE

from lme_bench.ingest.question import IngestOutcome
from lme_bench.qa import batch_job_stage
from lme_bench.qa.batch_job_stage import AnswerItem, Taken
from lme_bench.qa.panel import QaPanel
from lme_bench.results.batch_jobs import BatchJob
from lme_bench.results.qa_tables import HypothesisRow


@task(name="answer-batch-take", cache_policy=NO_CACHE, persist_result=False)
def take_answer_requests(items: list[AnswerItem], qa: QaPanel) -> list[Taken]:
    return batch_job_stage.take_requests(items, qa)


@task(
    name="answer-batch-start",
    cache_policy=NO_CACHE,
    persist_result=False,
    retries=2,
    retry_delay_seconds=10,
)
def start_answer_job(taken: list[Taken], qa: QaPanel, run_dir: Path) -> BatchJob | None:
    return batch_job_stage.start_job(taken, qa, run_dir)


@task(name="answer-batch-collect", cache_policy=NO_CACHE, persist_result=False)
def collect_answers(
    taken: list[Taken],
    job: BatchJob | None,
    qa: QaPanel,
    run_dir: Path,
    scope: str,
    outcomes: list[IngestOutcome],
    per_question: Task[Any, Any],
) -> list[HypothesisRow | BaseException]:
    """Every question's row (or the error that ended it); fine rows kept in the cache."""
    found = batch_job_stage.collect_answers(taken, job, qa, run_dir)
    settings = qa.settings  # what the per-question answer task's key hashes
    StageCache(per_question).keep(
        [
            (stage_key("answer", one.item.ref, settings, scope, outcome), row)
            for one, outcome, row in zip(taken, outcomes, found, strict=True)
            if isinstance(row, HypothesisRow) and row.status == "ok"
        ]
    )
    return found
