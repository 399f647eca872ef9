"""The `benchmark` flow, whichever benchmark the config names: prepare questions, locate their
memories, then per question ingest → retrieval / answer → judge (each question moves on as soon
as its previous stage is done, each stage within its limit), then the report and its artifacts.
flows/longmemeval.py keeps the flow's old name, `longmemeval`, for deployments made before.

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
from typing import Any, cast

from lme_bench_flows import artifacts, run_origin
from lme_bench_flows.earlier_attempts import drop_earlier_attempts_artifacts
from lme_bench_flows.question_run import run_questions
from lme_bench_flows.scale_out import run_shards
from lme_bench_flows.stage_runs import as_is
from lme_bench_flows.stopping import stopping_cleanly
from lme_bench_tasks import benchmark as tasks
from prefect import flow, get_run_logger
from prefect.runtime import flow_run
from prefect.states import Failed
from prefect.task_runners import ThreadPoolTaskRunner

from lme_bench.common.secrets import RedactingLogFilter
from lme_bench.config.settings import Settings
from lme_bench.report.history_html import history_page
from lme_bench.report.run_facts import wall_words
from lme_bench.report.run_report import headline
from lme_bench.results import series
from lme_bench.results.readback import read_hypotheses
from lme_bench.results.recorded_settings import check_settings, record_moves, record_settings
from lme_bench.results.run_folder import rerun_command
from lme_bench.results.run_mirror import drop_local_copies, drop_working_copy, publish_recorded
from lme_bench.run import cache_keys, finish, steps, stopped
from lme_bench.run.collect import RunCollector
from lme_bench.run.failure_summary import failure_message
from lme_bench.run.request import RunRequest
from lme_bench.run.rerun import failed_question_ids, merge_previous, pulled_run

FLOW_NAME = "benchmark"
MAX_THREADS = 128  # the stage limits bound what runs; idle threads cost nothing


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


def run_benchmark(request: RunRequest) -> dict[str, Any]:
    """Run the flow in this process (what `lme-bench run` calls); SIGTERM or Ctrl-C stops it,
    its temporary Prefect server and its other child processes."""
    with stopping_cleanly(request.run_id):
        result: dict[str, Any] = benchmark(request)
    return result


def _run_name() -> str:
    """`<flow> <run id>[ <label>] (<config>)`, the run id as the run will use it; <flow> is the
    flow's name (`benchmark`, or `longmemeval` for a deployment of the old name)."""
    flow_name = flow_run.flow_name or FLOW_NAME
    given = flow_run.parameters.get("request") or {}
    try:
        request = given if isinstance(given, RunRequest) else RunRequest.model_validate(given)
    except Exception:  # a bad request fails the run itself, with its own error
        return f"{flow_name} (bad request)"
    try:
        run_id = _in_series(request).run_id
    except Exception:  # a config it cannot read yet: the run says so itself
        run_id = request.run_id
    if run_id is None:
        return f"{flow_name} (bad request)"
    label = f" {request.label}" if request.label else ""
    return f"{flow_name} {run_id}{label} ({request.config})"  # no [...]: the CLI reads markup


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


@flow(
    name=FLOW_NAME,
    flow_run_name=_run_name,
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_THREADS),  # type: ignore[arg-type]
    log_prints=True,
)
def benchmark(request: RunRequest | None = None) -> dict[str, Any]:
    request = request or RunRequest()
    _mask_secrets_in_logs()
    drop_earlier_attempts_artifacts()  # a retry shows only its own progress and tables
    with _settled_garbage_collector():
        try:
            return _run_request(request)
        except RunRegressed as regressed:
            return _regressed_state(regressed)


def _checked_plan(
    request: RunRequest, record: bool, settings: Settings | None = None
) -> tuple[Settings, steps.RunPlan]:
    """The request's settings (`settings` when already read) and plan, refused
    (SettingsChanged) when its run id recorded other settings; with `record`, a request that
    is no replay records them."""
    settings = settings or request.settings()
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
    return _fixed_in_series(request)[0]


def _fixed_in_series(request: RunRequest) -> tuple[RunRequest, Settings | None]:
    """_in_series's request, and its settings when they are those read to fix it (the run id
    they hold is the one fixed), so the run reads its settings once; else None."""
    origin = request.schedule or run_origin.run_schedule()
    settings = request.settings()
    deployed = origin is not None and origin.deployment is not None
    scheduled_here = request.schedule is None and origin is not None and origin.auto_scheduled
    new_id = scheduled_here or (request.run_id is None and (deployed or settings.run.id is None))
    run_id = _stable_run_id() if new_id else request.run_id or settings.run.id
    pulled_run(settings, str(run_id))  # a finished run at a results URL, here to go on with
    recorded = series.recorded_series(settings.run.results_dir / str(run_id))
    name = series.series_name(settings, request.config, origin, recorded or request.series)
    fixed = request.model_copy(update={"run_id": run_id, "series": name, "schedule": origin})
    return fixed, settings if settings.run.id == run_id else None


def _run_request(request: RunRequest) -> dict[str, Any]:
    """The run: sharded into child flow runs, or every question here, then the report."""
    request, known = _fixed_in_series(request)
    if request.shards > 1:  # the shards run as child flow runs replaying the settings recorded
        settings, plan = _checked_plan(request, record=True, settings=known)  # here; this
        publish_recorded(settings.run.results_url, plan.run_dir)  # run then reports
        request, known = run_shards(request.model_copy(update={"replay": True})), None
    started_at = datetime.now(UTC)
    stopped.running(None)  # until this run's memories are located, a stop has none to count
    settings, plan = _checked_plan(request, record=False, settings=known)
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
    from_cache = run_questions(refs, settings, scope, collector, plan.run_dir)
    results = collector.results()
    if request.failed_only:
        refs = merge_previous(plan.run_dir, prepared, refs, results)
    report = tasks.write_results(
        plan,
        as_is(settings),
        as_is(prepared),
        as_is(refs),
        as_is(results),
        started_at,
        publish=not request.shard,
    )
    if request.shard:  # its part of the run is in the cache and build store; the parent
        drop_working_copy(settings.run.results_url, plan.run_dir)  # writes the run
    stopped.running(None)  # its summary is written: a stop from here on leaves it be
    if "report" in settings.stages:
        _publish(report, settings, request.compare_to)
    if _deployed(request):  # the run is at its URL: the worker keeps no copy of it
        _drop_copies(settings, plan.run_dir, str(request.series))
    return _outcome(report, results, collector, len(refs), from_cache, settings.run.results_url)


def _publish(report: finish.RunReport, settings: Settings, compare_to: str | None) -> None:
    """The report's artifacts: its tables, its series' history, the comparison asked for."""
    artifacts.publish_report(report, settings.run.link_base)
    artifacts.publish_history(report, settings.run.link_base, settings.run.results_url)
    if compare_to:
        artifacts.publish_comparison(compare_to, report, settings.run.link_base)


def _drop_copies(settings: Settings, run_dir: Path, series_name: str) -> None:
    """The run folder and its series' history page out of the working folder of a run kept at
    a results URL, where both were copied (a copy that cannot be removed is logged, never
    fails the run)."""
    work = settings.run.results_dir
    copies = [run_dir, history_page(work, series_name)]
    try:
        drop_local_copies(settings.run.results_url, work, copies)
    except OSError as exc:
        get_run_logger().warning("the working copy of the run stays: %s", exc)


def _deployed(request: RunRequest) -> bool:
    """Whether the run is a deployment's flow run (on a worker), not `lme-bench run`'s."""
    return request.schedule is not None and request.schedule.deployment is not None


def _outcome(
    report: finish.RunReport,
    results: finish.RunResults,
    collector: RunCollector,
    questions: int,
    from_cache: dict[str, int],
    results_url: str | None = None,
) -> dict[str, Any]:
    """The run's last log line, then its failures or regression raised, else its result; a
    run kept at a results URL is named there (its local folder is a working copy)."""
    done = questions - len(report.failed)
    where = f"{results_url}/{report.run_id}" if results_url else str(report.run_dir)
    lead, regressed = _gate_words(report)
    get_run_logger().info(
        "%s%d of %d questions done (%d failed) in %s; %s; results: %s",
        lead,
        done,
        questions,
        len(report.failed),
        wall_words(report.summary["run"]["wall_seconds"]),
        headline(report.summary),
        where,
    )
    if report.failed:
        failures = failure_message(report.failed, results.failed, collector.failed_stage)
        raise RunFailures(
            f"{lead}{failures}; results written to {where};"
            f" `{rerun_command(report.run_id, results_url or report.run_dir.parent)}` redoes them"
        )
    if regressed:
        raise RunRegressed(f"{regressed}; results written to {where}")
    return {
        "run_id": report.run_id,
        "run_dir": str(report.run_dir),
        "summary": report.summary,
        "from_cache": from_cache,
    }
