"""Scale-out: a parent flow run splits the questions into shards, each a child flow run of a
deployment (any worker: process, Docker, Kubernetes), then reports the whole run.

The children persist their task results to the shared cache storage and their memories to
the shared memory system; the parent then runs the run itself, where every task is a cache hit,
and writes the report and its artifacts. So results and cache must be on storage every worker
reaches.
"""

from __future__ import annotations

import asyncio
from typing import Any

from prefect import get_run_logger
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment
from prefect.flow_runs import wait_for_flow_run

from lme_bench.run import steps
from lme_bench.run.request import RunRequest


def _shards(question_ids: list[str], shards: int) -> list[list[str]]:
    return [question_ids[i::shards] for i in range(shards) if question_ids[i::shards]]


def run_shards(request: RunRequest) -> RunRequest:
    """Start the shards and wait for them; the request that then collects the whole run."""
    if not request.shard_deployment:
        raise ValueError("shards > 1 needs shard_deployment, e.g. 'benchmark/shard'")
    settings = request.settings()
    if settings.cache.scope == "off":
        raise ValueError("scale-out collects the shards' work from the task cache: [cache] is off")
    plan = steps.plan_run(settings)
    _, refs = steps.prepare_questions(plan, request.questions, request.limit)
    child = request.model_copy(
        update={"shards": 1, "shard_deployment": None, "shard_queues": None, "limit": None}
    )
    queues: list[str | None] = list(request.shard_queues or []) or [None]
    stages = [s for s in settings.stages if s != "report"]
    logger = get_run_logger()
    runs: list[FlowRun] = []
    for number, ids in enumerate(_shards([r.question_id for r in refs], request.shards), 1):
        label = f"shard {number}/{request.shards}"
        shard = child.model_copy(
            update={"questions": ids, "stages": stages, "label": label, "shard": True}
        )
        # timeout 0: returns at once, so every shard runs in parallel
        started: Any = run_deployment(
            request.shard_deployment,
            parameters={"request": shard.model_dump(mode="json")},
            flow_run_name=f"{plan.run_id} shard {number}/{request.shards}",
            timeout=0,
            as_subflow=True,
            work_queue_name=queues[(number - 1) % len(queues)],
        )
        runs.append(started)
    finished = asyncio.run(_wait_all(runs))
    states = [str(run.state.name) if run.state else "unknown" for run in finished]
    logger.info("shards finished: %s", ", ".join(states))
    for number, state in enumerate(states, 1):
        if state != "Completed":  # crashed, failed or cancelled: what it finished is cached
            logger.warning(
                "shard %d/%d ended %s: this run redoes the questions it left unfinished",
                number, request.shards, state,
            )  # fmt: skip
    # Every shard's successes are in the cache now: this run only collects them (and redoes
    # what a shard failed) and writes the report.
    return child.model_copy(update={"questions": [r.question_id for r in refs]})


async def _wait_all(runs: list[FlowRun]) -> list[FlowRun]:
    return list(
        await asyncio.gather(
            *(wait_for_flow_run(r.id, timeout=None, poll_interval=5) for r in runs)
        )
    )
