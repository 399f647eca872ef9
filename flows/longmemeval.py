"""The `longmemeval` flow: prepare questions, locate their memories, then per question
ingest → retrieval / answer → judge (each question moves on as soon as its previous stage is
done, each stage within its limit), then the report and its artifacts.

It only sequences tasks; all work lives in the core package. Runs with no server to start
(Prefect's ephemeral mode) or against a Prefect server / deployment. With `shards` > 1 it
splits the questions into child flow runs of a deployment (flows/scale_out.py).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from lme_bench_flows import artifacts, run_origin, schedule
from lme_bench_flows.batched_stages import answer_deferred, judge_deferred
from lme_bench_flows.earlier_attempts import drop_earlier_attempts_artifacts
from lme_bench_flows.scale_out import run_shards
from lme_bench_flows.stopping import stopping_cleanly
from lme_bench_tasks import benchmark as tasks
from prefect import flow, get_run_logger, tags
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run
from prefect.states import Failed
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from lme_bench.common.limits import every_ingestion_started, ingestions_starting
from lme_bench.common.secrets import RedactingLogFilter
from lme_bench.common.stop_signal import STOPPING
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.report.run_facts import wall_words
from lme_bench.report.run_report import headline
from lme_bench.results import series
from lme_bench.results.readback import read_hypotheses
from lme_bench.results.recorded_settings import check_settings, record_moves, record_settings
from lme_bench.results.run_folder import rerun_command
from lme_bench.run import batch, cache_keys, steps, stopped
from lme_bench.run.collect import AnswerJob, Done, IngestJob, Job, JudgeJob, RunCollector
from lme_bench.run.failure_summary import failure_message
from lme_bench.run.progress import RunProgress
from lme_bench.run.request import RunRequest
from lme_bench.run.rerun import failed_question_ids, merge_previous

T = TypeVar("T")
MAX_THREADS = 128  # the stage limits bound what runs; idle threads cost nothing


def _as_is(value: T) -> T:
    """A task argument Prefect passes on without walking it for futures (slow for big ones)."""
    return cast(T, quote(value))


class RunFailures(RuntimeError):
    """Raised after the results are written when some questions failed."""


class RunRegressed(RuntimeError):
    """Raised after the report and its artifacts are published when a watched figure fell
    against the baseline ([regression]): the message says what fell, by how much, with its
    interval, and the baseline."""


def _regressed_state(error: RunRegressed) -> dict[str, Any]:
    """The flow run's Failed state for a regression: its message is the regression's own
    words ("regressed: QA overall … vs …"), as a notification quotes it, rather than Prefect's
    "Flow run encountered an exception: RunRegressed: …"; a caller of the flow still gets
    `error` raised. (Typed as the flow's value: Prefect takes a returned state as the run's.)"""
    return cast(dict[str, Any], Failed(message=str(error), data=error))


def _gate_words(report: Any) -> tuple[str, str | None]:
    """The baseline's line that leads the run's last log line ("" without `compare_to`), and
    the regression it failed on, if any (lme_bench.run.baseline)."""
    record = report.summary.get("baseline") or {}
    line = record.get("message") or ""
    return (f"{line}; " if line else ""), line if record.get("status") == "regressed" else None


def run_longmemeval(request: RunRequest) -> dict[str, Any]:
    """Run the flow in this process (what `lme-bench run` calls); SIGTERM or Ctrl-C stops it,
    its temporary Prefect server and its other child processes."""
    with stopping_cleanly(request.run_id):
        result: dict[str, Any] = longmemeval(request)
    return result


def _run_name() -> str:
    """`longmemeval <run id>[ <label>] (<config>)`, the run id as the run will use it."""
    given = flow_run.parameters.get("request") or {}
    try:
        request = given if isinstance(given, RunRequest) else RunRequest.model_validate(given)
    except Exception:  # a bad request fails the run itself, with its own error
        return "longmemeval (bad request)"
    try:
        run_id = _in_series(request).run_id
    except Exception:  # a config it cannot read yet: the run says so itself
        run_id = request.run_id
    if run_id is None:
        return "longmemeval (bad request)"
    label = f" {request.label}" if request.label else ""
    return f"longmemeval {run_id}{label} ({request.config})"  # no [...]: the CLI reads markup


def _mask_secrets_in_logs() -> None:
    """Every handler of the root and Prefect loggers masks secrets (errors are masked where
    they arise; this covers whatever else a library logs)."""
    for name in (None, "prefect"):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactingLogFilter) for f in handler.filters):
                handler.addFilter(RedactingLogFilter())


@contextmanager
def _settled_garbage_collector() -> Iterator[None]:
    """While the run lasts, objects alive at its start (modules, settings, clients) are left out
    of the collector's scans and young objects are scanned less often: with a hundred thousand
    objects held, each full scan paused every thread for up to 200 ms, which delayed model
    calls by as much (their p99 went from 209 ms to 409 ms on a 200 ms fake model). Afterwards
    all is as before, so a process that runs many flows frees what each one leaves (garbage
    from before the run too: no collection first, as one took a quarter of a second)."""
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(50_000, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _stable_run_id() -> str:
    """A new run's id, the same when Prefect retries this flow run (so its cache holds)."""
    started = flow_run.get_scheduled_start_time()
    suffix = (flow_run.get_id() or "")[:8]
    return f"run-{started.strftime('%Y%m%d-%H%M%S')}" + (f"-{suffix}" if suffix else "")


def _batch_sizes(settings: Settings, questions: int) -> dict[str, int]:
    """Questions per task run of the stages that take them in batches (none for small runs)."""
    size = batch.questions_per_task(settings, questions)
    if size == 1:
        return {}
    return dict.fromkeys(batch.batchable_stages(settings), size)


def _run_questions(
    refs: list[QuestionRef],
    settings: Settings,
    scope: str,
    collector: RunCollector,
    run_dir: Path,
) -> dict[str, int]:
    """Run every question's stages; how many stage results came from the cache, by stage.
    With `[qa] batch` or `[judge] batch`, that stage waits for the stages before it and goes
    as one batch job (flows/batched_stages.py)."""
    by_stage = tasks.per_question_tasks(settings)
    batch_sizes = _batch_sizes(settings, len(refs))
    # worker processes start now, so they have imported the stages by the first batch
    runner = batch.BatchRunner(batch.worker_processes(settings) if batch_sizes else 1)
    # made once: each with_options() has Prefect read the function's source again
    reingest = by_stage["ingest"].with_options(refresh_cache=True)
    upstream_name = {"ingest": "location", "judge": "hypothesis"}
    stages = [s for s in ("ingest", "retrieval", "answer", "judge") if s in settings.stages]
    progress = artifacts.Progress(len(refs), builds=collector.builds, stages=stages)
    agent = settings.models.agent if settings.ingest.mode != "raw" else None
    terminal = RunProgress(
        len(refs), stages, settings.prices, agent_model=agent, builds=collector.builds
    )

    def submit(jobs: list[Job]) -> PrefectFuture[Any]:
        if jobs[0].stage in batch_sizes:
            return submit_batch(jobs)
        (job,) = jobs
        ref = refs[job.index]
        task = by_stage[job.stage]
        if isinstance(job, IngestJob) and job.location.entries == 0:
            task = reingest  # memory gone or empty: ingest again
        labels = (job.stage, f"type:{ref.question_type}") if settings.run.task_tags else ()
        with tags(*labels):
            arguments: dict[str, Any] = {
                upstream_name.get(job.stage, "outcome"): _as_is(job.upstream)
            }
            if job.stage == "judge":
                arguments["ingestion_id"] = collector.ingestion_id(job.index)
            future: PrefectFuture[Any] = task.submit(
                ref=_as_is(ref), settings=_as_is(settings), scope=scope, **arguments
            )
        return future

    def submit_batch(jobs: list[Job]) -> PrefectFuture[Any]:
        stage = jobs[0].stage
        questions = batch.Batch(
            stage,
            [refs[job.index] for job in jobs],
            [job.upstream for job in jobs],
            settings,
            scope,
        )
        with tags(*((stage,) if settings.run.task_tags else ())):
            future: PrefectFuture[Any] = tasks.question_batch.submit(
                batch=_as_is(questions),
                runner=_as_is(runner),
                per_question=_as_is(by_stage[stage]),
            )
        return future

    reused = dict.fromkeys(schedule.STAGE_ORDER, 0)

    def reuse(job: Job) -> Done | None:
        if isinstance(job, IngestJob) and job.location.entries == 0:
            return None
        ingestion_id = collector.ingestion_id(job.index) if job.stage == "judge" else None
        key = tasks.stage_key(
            job.stage, refs[job.index], settings, scope, job.upstream, ingestion_id
        )
        hit, value = tasks.cached_result(by_stage[job.stage], key)
        reused[job.stage] += hit
        return Done(job, value, None, from_cache=True) if hit else None

    held_back: list[Job] = []  # run in one batch job once the stages before are done
    batched = (AnswerJob,) * settings.qa.batch + (JudgeJob,) * settings.judge.batch

    def finished(done: Done) -> list[Job]:
        follow = collector.finished(done)
        if batched:
            held_back.extend(job for job in follow if isinstance(job, batched))
            follow = [job for job in follow if not isinstance(job, batched)]
        terminal.record(done.job.stage, done.value, from_cache=done.from_cache)
        progress.stage_finished(done.job.stage)
        terminal.update(collector.questions_done, len(collector.failed))
        progress.update(collector.questions_done, len(collector.failed), sum(reused.values()))
        return follow

    def tick(running: dict[str, int]) -> None:  # while stages run, before any finishes
        terminal.tick(running)
        progress.tick(
            running, collector.questions_done, len(collector.failed), sum(reused.values())
        )

    locations = tasks.locate_memories(_as_is(refs), _as_is(settings), scope)
    memory_ids = [location.memory_id for location in locations.values()]
    made = terminal.made_after_ingestion  # what a stop counts
    stopped.running(stopped.StoppedRun.of(settings, run_dir, memory_ids, made))
    limits = {stage: settings.limits.for_stage(stage) for stage in schedule.STAGE_ORDER}
    STOPPING.clear()
    ingestions_starting()

    def run(jobs: list[Job]) -> None:
        schedule.run_jobs(
            jobs,
            limits,
            submit,
            finished,
            reuse,
            batch_sizes,
            every_ingestion_started=every_ingestion_started,
            tick=tick,
        )

    def run_held_back(stage: str) -> None:
        """The held-back jobs of `stage`: from the cache, else in one batch job; then what
        follows them."""
        jobs = [job for job in held_back if job.stage == stage]
        held_back[:] = [job for job in held_back if job.stage != stage]
        follow, left = [], []
        for job in jobs:
            found = reuse(job)
            if found is None:
                left.append(job)
            else:
                follow += finished(found)
        if left and stage == "answer":
            answers = cast(list[AnswerJob], left)
            for done in answer_deferred(answers, refs, settings, scope, run_dir, by_stage[stage]):
                follow += finished(done)
        elif left:
            judge_jobs = cast(list[JudgeJob], left)
            per_question = by_stage[stage]
            for done in judge_deferred(
                judge_jobs, refs, settings, scope, run_dir, collector, per_question
            ):
                follow += finished(done)
        if follow:
            run(follow)

    try:
        run(collector.start(locations))
        run_held_back("answer")
        run_held_back("judge")
    except BaseException:  # a signal (or a fault): in-flight questions stop at their next step
        STOPPING.set()
        raise
    finally:
        runner.close()
    progress.close(collector.questions_done, len(collector.failed), sum(reused.values()))
    terminal.show(final=True)
    if any(reused.values()):
        counts = ", ".join(f"{stage} {n}" for stage, n in reused.items() if n)
        get_run_logger().info("Stage results taken from the cache (no task run): %s", counts)
    return reused


@flow(
    name="longmemeval",
    flow_run_name=_run_name,
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_THREADS),  # type: ignore[arg-type]
    log_prints=True,
)
def longmemeval(request: RunRequest | None = None) -> dict[str, Any]:
    request = request or RunRequest()
    _mask_secrets_in_logs()
    drop_earlier_attempts_artifacts()  # a retry shows only its own progress and tables
    with _settled_garbage_collector():
        try:
            return _run_request(request)
        except RunRegressed as regressed:
            return _regressed_state(regressed)


def _checked_plan(request: RunRequest, record: bool) -> tuple[Settings, steps.RunPlan]:
    """The request's settings and plan, refused (SettingsChanged) when its run id recorded
    other settings; with `record`, a request that is no replay records them."""
    settings = request.settings()
    plan = steps.plan_run(settings)
    plan = replace(plan, request=request.model_dump(mode="json", exclude={"failed_only", "replay"}))
    check_settings(plan.run_dir, settings, request.failed_only)
    if record and not request.replay:  # a replay runs what was recorded, keeping the first request
        record_settings(plan.run_dir, settings, plan.request)
    return settings, plan


def _in_series(request: RunRequest) -> RunRequest:
    """The request with its run id and series fixed. A scheduled run always gets a new run
    id (the same when Prefect retries it), whatever its config or parameters say; a deployment
    run by hand too, unless its parameters name one; any other run keeps its config's. A
    request that carries its schedule (a shard's) was fixed so already."""
    origin = request.schedule or run_origin.run_schedule()
    settings = request.settings()
    deployed = origin is not None and origin.deployment is not None
    scheduled_here = request.schedule is None and origin is not None and origin.auto_scheduled
    new_id = scheduled_here or (request.run_id is None and (deployed or settings.run.id is None))
    run_id = _stable_run_id() if new_id else request.run_id or settings.run.id
    recorded = series.recorded_series(settings.run.results_dir / str(run_id))
    name = series.series_name(settings, request.config, origin, recorded or request.series)
    return request.model_copy(update={"run_id": run_id, "series": name, "schedule": origin})


def _run_request(request: RunRequest) -> dict[str, Any]:
    """The run: sharded into child flow runs, or every question here, then the report."""
    request = _in_series(request)
    if request.shards > 1:  # the shards run as child flow runs replaying the settings recorded
        _checked_plan(request, record=True)  # here; this run then reports
        request = run_shards(request.model_copy(update={"replay": True}))
    started_at = datetime.now(UTC)
    stopped.running(None)  # until this run's memories are located, a stop has none to count
    settings, plan = _checked_plan(request, record=False)
    if settings.limits.shared:
        from lme_bench_tasks.shared_limits import install_shared_limits

        install_shared_limits(settings)
    question_ids = request.questions
    if request.failed_only:
        question_ids = failed_question_ids(plan.run_dir, request.questions)
    prepared, refs = tasks.prepare_questions(plan, question_ids, request.limit)
    if not request.replay:  # once the input is known to be good
        record_settings(plan.run_dir, settings, plan.request)
    else:  # a replay keeps what was recorded, but for a model server named where it is now
        record_moves(plan.run_dir, settings)
    existing = None
    if "judge" in settings.stages and "answer" not in settings.stages:
        existing = {h.question_id: h for h in read_hypotheses(plan.run_dir / "hypotheses.parquet")}
    collector = RunCollector(refs, settings, existing)
    scope = cache_keys.memory_scope(settings, plan.run_id)
    from_cache = _run_questions(refs, settings, scope, collector, plan.run_dir)
    results = collector.results()
    if request.failed_only:
        refs = merge_previous(plan.run_dir, prepared, refs, results)
    report = tasks.write_results(
        plan, _as_is(settings), _as_is(prepared), _as_is(refs), _as_is(results), started_at
    )
    stopped.running(None)  # its summary is written: a stop from here on leaves it be
    if "report" in settings.stages:
        artifacts.publish_report(report, settings.run.link_base)
        artifacts.publish_history(report, settings.run.link_base)
        if request.compare_to:
            artifacts.publish_comparison(request.compare_to, report, settings.run.link_base)
    done = len(refs) - len(report.failed)
    lead, regressed = _gate_words(report)
    get_run_logger().info(
        "%s%d of %d questions done (%d failed) in %s; %s; results: %s",
        lead,
        done,
        len(refs),
        len(report.failed),
        wall_words(report.summary["run"]["wall_seconds"]),
        headline(report.summary),
        report.run_dir,
    )
    if report.failed:
        failures = failure_message(report.failed, results.failed, collector.failed_stage)
        raise RunFailures(
            f"{lead}{failures}; results written to {report.run_dir};"
            f" `{rerun_command(report.run_id, report.run_dir.parent)}` redoes them"
        )
    if regressed:
        raise RunRegressed(f"{regressed}; results written to {report.run_dir}")
    return {
        "run_id": report.run_id,
        "run_dir": str(report.run_dir),
        "summary": report.summary,
        "from_cache": from_cache,
    }
