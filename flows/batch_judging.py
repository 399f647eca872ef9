"""The judge stage through a provider's batch API (`[judge] batch = true`) in the flow.

The flow holds back every question's judging until the other stages are done, then sends the
requests left (those not in the cache) as one job per provider and waits for it:

- a flow run of a deployment suspends (no worker is held while the job runs, for minutes or
  hours) after scheduling a run of the `judge-batch-check/batch-check` deployment, which
  looks at the job once, resumes the suspended run when the job has ended, and otherwise
  schedules itself again `[judge] batch_poll_s` later. Resumed, the flow runs again from the
  start: every stage before is taken from the cache, the job is found in the run folder, and
  its replies become the rows;
- any other run (`lme-bench run`, a subflow, no check deployment) looks at the job every
  `[judge] batch_poll_s` seconds in its own process.

A run restarted while its job runs finds the job in the run folder (lme_bench.results.
batch_jobs) and waits for it rather than sending the requests again.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lme_bench_tasks.batch_judge import (
    check_judge_jobs,
    collect_judge_scores,
    start_judge_jobs,
)
from prefect import Task, flow, get_run_logger
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import FlowRun
from prefect.context import FlowRunContext
from prefect.deployments import run_deployment
from prefect.exceptions import NotPausedError
from prefect.flow_runs import resume_flow_run, suspend_flow_run

from lme_bench.common.stop_signal import STOPPING, check_stopping
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge import batch_stage
from lme_bench.judge.batch_stage import JudgeItem
from lme_bench.results.batch_jobs import BatchJob, read_jobs
from lme_bench.run.collect import Done, JudgeJob, RunCollector
from lme_bench.run.request import RunRequest
from lme_bench.run.steps import StageFailed, require_ok

CHECK_DEPLOYMENT = "judge-batch-check/batch-check"


def judge_deferred(
    jobs: list[JudgeJob],
    refs: list[QuestionRef],
    settings: Settings,
    scope: str,
    run_dir: Path,
    collector: RunCollector,
    per_question: Task[Any, Any],
) -> list[Done]:
    """Judge `jobs` (not in the cache) through the batch API; each job's Done, as its own
    task would have ended (StageFailed carrying the rows when a call failed)."""
    jobs = sorted(jobs, key=lambda job: job.index)  # the run's order, not the answers'
    items = [JudgeItem(refs[job.index], job.hypothesis) for job in jobs]
    batch_jobs = start_judge_jobs(items, settings, run_dir)
    names = ", ".join(f"{job.provider} {job.job_id}" for job in batch_jobs)
    get_run_logger().info("Judging %d questions through batch job(s) %s", len(items), names)
    while not check_judge_jobs(batch_jobs, settings, run_dir):
        _wait(batch_jobs, settings, run_dir)
    ingestion_ids = {refs[job.index].question_id: collector.ingestion_id(job.index) for job in jobs}
    found = collect_judge_scores(
        items, batch_jobs, settings, run_dir, scope, ingestion_ids, per_question
    )
    done = []
    for job in jobs:
        rows = found[refs[job.index].question_id]
        try:
            done.append(Done(job, require_ok(rows), None))
        except StageFailed as failed:
            done.append(Done(job, None, failed))
    return done


def _suspendable() -> bool:
    context = FlowRunContext.get()
    run = context.flow_run if context else None
    return run is not None and run.deployment_id is not None and run.parent_task_run_id is None


def _wait(jobs: list[BatchJob], settings: Settings, run_dir: Path) -> None:
    """Suspend until the check deployment resumes this run, or wait here one poll interval."""
    logger = get_run_logger()
    if _suspendable():
        context = FlowRunContext.get()
        assert context is not None and context.flow_run is not None
        try:
            schedule_check(str(context.flow_run.id), run_dir, settings.judge.batch_poll_s)
        except Exception as exc:  # no check deployment: wait in this process
            logger.warning(
                "Cannot schedule a check of the batch job (%s: %s); waiting in this process",
                type(exc).__name__,
                exc,
            )
        else:
            logger.info("Suspending while the batch job runs; %s resumes it", CHECK_DEPLOYMENT)
            suspend_flow_run(key=f"judge-batch-{uuid.uuid4().hex}")  # raises: the run ends here
    STOPPING.wait(settings.judge.batch_poll_s)
    check_stopping()


def schedule_check(flow_run_id: str, run_dir: Path, after_s: float) -> None:
    """A run of the check deployment `after_s` seconds from now."""
    run_deployment(
        CHECK_DEPLOYMENT,
        parameters={"flow_run_id": flow_run_id, "run_dir": str(run_dir)},
        scheduled_time=datetime.now(UTC) + timedelta(seconds=after_s),
        timeout=0,
        as_subflow=False,
    )


def _waiting_run(flow_run_id: str) -> FlowRun:
    with get_client(sync_client=True) as client:
        return client.read_flow_run(uuid.UUID(flow_run_id))


@flow(name="judge-batch-check")
def judge_batch_check(flow_run_id: str, run_dir: str) -> str:
    """Look once at the batch jobs a suspended flow run waits for: resume it when they have
    ended, else look again `[judge] batch_poll_s` later (another run of this deployment).
    Ends when the flow run has ended (cancelled, say) or already runs again."""
    run = _waiting_run(flow_run_id)
    if run.state is None or run.state.is_final():
        return "flow run ended"
    request = RunRequest.model_validate(run.parameters.get("request") or {})
    settings = request.settings()
    jobs = [job for job in read_jobs(Path(run_dir), "judge") if job.state == "running"]
    if jobs and not batch_stage.refresh_jobs(jobs, settings, Path(run_dir)):
        schedule_check(flow_run_id, Path(run_dir), settings.judge.batch_poll_s)
        return "running"
    if not run.state.is_paused():  # about to suspend, or running again: look again later
        schedule_check(flow_run_id, Path(run_dir), settings.judge.batch_poll_s)
        return "flow run not suspended"
    try:
        resume_flow_run(uuid.UUID(flow_run_id))
    except NotPausedError:  # resumed meanwhile
        return "flow run not suspended"
    return "resumed"
