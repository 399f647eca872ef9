"""Stages through a provider's batch API (`[qa] batch`, `[judge] batch`) in the flow.

The flow holds back those stages until the stages before them are done for every question,
then sends the requests left (those not in the cache) as one job per provider and waits:

- a flow run of a deployment suspends (no worker is held while the job runs, for minutes or
  hours) after scheduling a run of the `batch-check/watch` deployment, which looks at the
  run's jobs once, resumes the suspended run when they have ended, and otherwise schedules
  itself again. Resumed, the flow runs again from the start: what was done before comes from
  the cache, the job is found in the run folder, and its replies become the rows;
- any other run (`lme-bench run`, a shard, no check deployment) looks at the job every
  `batch_poll_s` seconds in its own process.

A run restarted while its job runs finds the job in the run folder (lme_bench.results.
batch_jobs) and waits for it rather than sending the requests again.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from lme_bench_flows.stage_runs import as_is
from lme_bench_tasks.batch_check import check_batch_jobs
from lme_bench_tasks.batch_job_answer import collect_answers, start_answer_job, take_answer_requests
from lme_bench_tasks.batch_job_judge import collect_judge_scores, start_judge_jobs
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
from lme_bench.judge.batch_job_stage import JudgeItem
from lme_bench.judge.panel import JudgePanel
from lme_bench.qa.batch_job_stage import AnswerItem
from lme_bench.qa.panel import QaPanel
from lme_bench.results.batch_jobs import BatchJob
from lme_bench.run import batch_job_watch
from lme_bench.run.builds import fetch_error
from lme_bench.run.collect import AnswerJob, Done, Job, JudgeJob, RunCollector
from lme_bench.run.request import RunRequest
from lme_bench.run.steps import StageFailed, require_ok

CHECK_DEPLOYMENT = "batch-check/watch"


class HeldBackStages:
    """Runs the held-back jobs of a stage (lme_bench.run.scheduler), those not in the cache,
    through the provider's batch API."""

    def __init__(
        self,
        refs: list[QuestionRef],
        settings: Settings,
        scope: str,
        run_dir: Path,
        collector: RunCollector,
        by_stage: dict[str, Task[Any, Any]],
        judges: JudgePanel | None,
        qa: QaPanel | None = None,
    ) -> None:
        self.refs, self.settings, self.scope, self.run_dir = refs, settings, scope, run_dir
        self.collector, self.by_stage, self.judges, self.qa = collector, by_stage, judges, qa

    def __call__(self, stage: str, jobs: list[Job]) -> list[Done]:
        per_question = self.by_stage[stage]
        if stage == "answer":
            if self.qa is None:
                raise ValueError("answer jobs held back in a run that builds no QA panel")
            answers = cast(list[AnswerJob], jobs)
            return answer_deferred(
                answers, self.refs, self.qa, self.scope, self.run_dir, per_question
            )
        judge_jobs = cast(list[JudgeJob], jobs)
        if self.judges is None:
            raise ValueError("judge jobs held back in a run that builds no judges")
        return judge_deferred(
            judge_jobs,
            self.refs,
            self.judges,
            self.scope,
            self.run_dir,
            self.collector,
            per_question,
        )


def judge_deferred(
    jobs: list[JudgeJob],
    refs: list[QuestionRef],
    judges: JudgePanel,
    scope: str,
    run_dir: Path,
    collector: RunCollector,
    per_question: Task[Any, Any],
) -> list[Done]:
    """Judge `jobs` (not in the cache) through the batch API; each job's Done, as its own
    task would have ended (StageFailed carrying the rows when a call failed)."""
    jobs = sorted(jobs, key=lambda job: job.index)  # the run's order, not the answers'
    items = [JudgeItem(refs[job.index], job.hypothesis) for job in jobs]
    batch_jobs = start_judge_jobs(items, as_is(judges), run_dir)
    _wait_for(batch_jobs, judges.settings, run_dir, len(items), "judging")
    ingestion_ids = {refs[job.index].question_id: collector.ingestion_id(job.index) for job in jobs}
    found = collect_judge_scores(
        items, batch_jobs, as_is(judges), run_dir, scope, ingestion_ids, per_question
    )
    done = []
    for job in jobs:
        rows = found[refs[job.index].question_id]
        try:
            done.append(Done(job, require_ok(rows), None))
        except StageFailed as failed:
            done.append(Done(job, None, failed))
    return done


def answer_deferred(
    jobs: list[AnswerJob],
    refs: list[QuestionRef],
    qa: QaPanel,
    scope: str,
    run_dir: Path,
    per_question: Task[Any, Any],
) -> list[Done]:
    """Answer `jobs` (not in the cache) through the batch API; each job's Done, as its own
    task would have ended."""
    settings = qa.settings
    refused = {job.index: fetch_error(job.outcome, settings) for job in jobs}  # the builds
    unfetched = [Done(job, None, refused[job.index]) for job in jobs if refused[job.index]]
    jobs = sorted((job for job in jobs if not refused[job.index]), key=lambda job: job.index)
    if not jobs:
        return unfetched
    items = [AnswerItem(refs[job.index], job.outcome.memory_id) for job in jobs]
    taken = take_answer_requests(items, as_is(qa))
    batch_job = start_answer_job(taken, as_is(qa), run_dir)
    if batch_job is not None:
        _wait_for([batch_job], settings, run_dir, len(items), "answers")
    outcomes = [job.outcome for job in jobs]
    found = collect_answers(taken, batch_job, as_is(qa), run_dir, scope, outcomes, per_question)
    done = unfetched
    for job, row in zip(jobs, found, strict=True):
        if isinstance(row, BaseException):
            done.append(Done(job, None, row))
            continue
        try:
            done.append(Done(job, require_ok(row), None))
        except StageFailed as failed:
            done.append(Done(job, None, failed))
    return done


def _wait_for(jobs: list[BatchJob], settings: Settings, run_dir: Path, n: int, what: str) -> None:
    names = ", ".join(f"{job.provider} {job.job_id}" for job in jobs)
    get_run_logger().info("%s of %d questions in batch job(s) %s", what.capitalize(), n, names)
    while not check_batch_jobs(jobs, settings, run_dir):
        _wait(jobs, settings, run_dir)


def _suspendable() -> bool:
    context = FlowRunContext.get()
    run = context.flow_run if context else None
    return run is not None and run.deployment_id is not None and run.parent_task_run_id is None


def _wait(jobs: list[BatchJob], settings: Settings, run_dir: Path) -> None:
    """Suspend until the check deployment resumes this run, or wait here one poll interval."""
    logger = get_run_logger()
    poll_s = batch_job_watch.poll_seconds(jobs, settings)
    if _suspendable():
        context = FlowRunContext.get()
        assert context is not None and context.flow_run is not None
        try:
            schedule_check(str(context.flow_run.id), run_dir, poll_s)
        except Exception as exc:  # no check deployment: wait in this process
            logger.warning(
                "Cannot schedule a check of the batch job (%s: %s); waiting in this process",
                type(exc).__name__,
                exc,
            )
        else:
            logger.info("Suspending while the batch job runs; %s resumes it", CHECK_DEPLOYMENT)
            suspend_flow_run(key=f"batch-{uuid.uuid4().hex}")  # raises: the run ends here
    STOPPING.wait(poll_s)
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


@flow(name="batch-check")
def batch_check(flow_run_id: str, run_dir: str) -> str:
    """Look once at the batch jobs a suspended flow run waits for: resume it when they have
    ended, else look again `batch_poll_s` later (another run of this deployment). Ends when
    the flow run has ended (cancelled, say); leaves a run resumed meanwhile alone."""
    run = _waiting_run(flow_run_id)
    if run.state is None or run.state.is_final():
        return "flow run ended"
    settings = RunRequest.model_validate(run.parameters.get("request") or {}).settings()
    jobs = batch_job_watch.running_jobs(Path(run_dir))
    if jobs and not batch_job_watch.refresh(jobs, settings, Path(run_dir)):
        schedule_check(flow_run_id, Path(run_dir), batch_job_watch.poll_seconds(jobs, settings))
        return "running"
    if not run.state.is_paused():  # about to suspend, or running again: look again later
        schedule_check(flow_run_id, Path(run_dir), batch_job_watch.poll_seconds(jobs, settings))
        return "flow run not suspended"
    try:
        resume_flow_run(uuid.UUID(flow_run_id))
    except NotPausedError:  # resumed meanwhile
        return "flow run not suspended"
    return "resumed"
