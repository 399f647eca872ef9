"""Every question's stages in the flow: the core scheduler (lme_bench.run.scheduler) handed
Prefect task runs to submit (flows/stage_runs.py), the cache to look results up in, the batch
API stages to run held back (flows/batch_job_stages.py), and the progress to tell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench_flows import artifacts
from lme_bench_flows.batch_job_stages import HeldBackStages
from lme_bench_flows.stage_runs import StageRuns, as_is
from lme_bench_tasks import benchmark as tasks
from prefect import get_run_logger

from lme_bench.common.limits import every_ingestion_started, ingestions_starting
from lme_bench.common.stop_signal import STOPPING
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.run import batch, steps, stopped
from lme_bench.run.collect import Done, RunCollector
from lme_bench.run.progress import RunProgress
from lme_bench.run.scheduler import Scheduler
from lme_bench.run.stage_table import PER_QUESTION


class _Watch:
    """The run's progress: the terminal line and the flow run's progress artifact."""

    def __init__(self, questions: int, settings: Settings, collector: RunCollector) -> None:
        stages = [s for s in PER_QUESTION if s in settings.stages]
        self.collector = collector
        self.artifact = artifacts.Progress(questions, builds=collector.builds, stages=stages)
        agent = settings.models.agent if settings.ingest.mode != "raw" else None
        self.terminal = RunProgress(
            questions, stages, settings.prices, agent_model=agent, builds=collector.builds
        )

    def finished(self, done: Done, reused: int) -> None:
        self.terminal.record(done.job.stage, done.value, from_cache=done.from_cache)
        self.artifact.stage_finished(done.job.stage)
        finished, failed = self.collector.questions_done, len(self.collector.failed)
        self.terminal.update(finished, failed)
        self.artifact.update(finished, failed, reused)

    def tick(self, running: dict[str, int], reused: int) -> None:
        self.terminal.tick(running)
        finished, failed = self.collector.questions_done, len(self.collector.failed)
        self.artifact.tick(running, finished, failed, reused)

    def close(self, reused: int) -> None:
        self.artifact.close(self.collector.questions_done, len(self.collector.failed), reused)
        self.terminal.show(final=True)


def _batch_sizes(settings: Settings, questions: int) -> dict[str, int]:
    """Questions per task run of the stages that take them in batches (none for small runs)."""
    size = batch.questions_per_task(settings, questions)
    if size == 1:
        return {}
    return dict.fromkeys(batch.batchable_stages(settings), size)


def held_back_stages(settings: Settings) -> frozenset[str]:
    """The stages sent through a provider's batch API, once the stages before are done."""
    return frozenset(("answer",) * settings.qa.batch + ("judge",) * settings.judge.batch)


def derived_once(settings: Settings) -> dict[str, dict[str, Any]]:
    """What the run derives once and hands to each stage's tasks, by the task's parameter:
    the memory system as configured, the QA panel (its model, prompts and that memory system)
    and the judges, each for a run that has the stage."""
    memory = steps.configured_backend(settings)
    handed: dict[str, dict[str, Any]] = {
        "ingest": {"memory": memory},
        "retrieval": {"memory": memory},
    }
    if "answer" in settings.stages:
        handed["answer"] = {"qa": steps.qa_panel(settings, memory)}
    if "judge" in settings.stages:
        handed["judge"] = {"judges": steps.judge_panel(settings)}
    return handed


def run_questions(
    refs: list[QuestionRef],
    settings: Settings,
    scope: str,
    collector: RunCollector,
    run_dir: Path,
) -> dict[str, int]:
    """Run every question's stages; how many stage results came from the cache, by stage."""
    by_stage = tasks.per_question_tasks(settings)
    batch_sizes = _batch_sizes(settings, len(refs))
    handed = derived_once(settings)
    # worker processes start now, so they have imported the stages by the first batch
    runner = batch.BatchRunner(batch.worker_processes(settings) if batch_sizes else 1)
    runs = StageRuns(refs, settings, scope, collector, by_stage, batch_sizes, runner, handed)
    watch = _Watch(len(refs), settings, collector)
    memory = as_is(handed["ingest"]["memory"])
    locations = tasks.locate_memories(as_is(refs), as_is(settings), scope, memory)
    memory_ids = [location.memory_id for location in locations.values()]
    made = watch.terminal.made_after_ingestion  # what a stop counts
    stopped.running(stopped.StoppedRun.of(settings, run_dir, memory_ids, made))
    scheduler = Scheduler(
        collector.finished,
        {stage: settings.limits.for_stage(stage) for stage in PER_QUESTION},
        runs.submit,
        lookup=runs.lookup,
        lookup_many=runs.lookup_many,
        batch_sizes=batch_sizes,
        held_back=held_back_stages(settings),
        run_held_back=HeldBackStages(
            refs,
            settings,
            scope,
            run_dir,
            collector,
            by_stage,
            handed.get("judge", {}).get("judges"),
            handed.get("answer", {}).get("qa"),
        ),
        every_ingestion_started=every_ingestion_started,
        watch=watch,
    )
    STOPPING.clear()
    ingestions_starting()
    try:
        scheduler.run(collector.start(locations))
    except BaseException:  # a signal (or a fault): in-flight questions stop at their next step
        STOPPING.set()
        raise
    finally:
        runner.close()
    watch.close(scheduler.from_cache)
    if scheduler.from_cache:
        counts = ", ".join(f"{stage} {n}" for stage, n in scheduler.reused.items() if n)
        get_run_logger().info("Stage results taken from the cache (no task run): %s", counts)
    return scheduler.reused
