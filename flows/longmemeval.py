"""The `longmemeval` flow: prepare questions, ingest each into memory, evaluate, report.

It only sequences tasks; all work lives in lme_bench.pipeline. Runs with no server to start
(Prefect's ephemeral mode) or against a Prefect server / deployment.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from prefect import flow, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner

from lme_bench import pipeline
from lme_bench.request import RunRequest
from lme_bench.results.summary import summary_table
from lme_bench.retrieval import RetrievalRow
from tasks import benchmark as tasks


class RunFailures(RuntimeError):
    """Raised after the results are written when some questions failed."""


_DEFAULT_RUNNER: Any = ThreadPoolTaskRunner(max_workers=4)  # `lme-bench run` sets [run] concurrency


@flow(name="longmemeval", task_runner=_DEFAULT_RUNNER, log_prints=True)
def longmemeval(request: RunRequest | None = None) -> dict[str, Any]:
    request = request or RunRequest()
    started_at = datetime.now(UTC)
    settings = request.settings()
    plan = pipeline.plan_run(settings)
    prepared, refs = tasks.prepare_questions(plan, request.questions, request.limit)

    ingested = tasks.ingest_question.map(refs, settings=unmapped(settings), run_id=plan.run_id)
    evaluated = tasks.evaluate_question.map(refs, ingested, settings=unmapped(settings))
    wait(list(evaluated))

    rows: list[RetrievalRow] = []
    outcomes: list[pipeline.IngestOutcome] = []
    for ref, ingest, evaluation in zip(refs, ingested, evaluated, strict=True):
        if ingest.state.is_completed():
            outcomes.append(cast(pipeline.IngestOutcome, ingest.result()))
        if evaluation.state.is_completed():
            rows.extend(cast(list[RetrievalRow], evaluation.result()))
        else:
            failed = ingest if not ingest.state.is_completed() else evaluation
            error = cast(BaseException, failed.result(raise_on_failure=False))
            rows.extend(pipeline.error_rows(ref, error))

    report = tasks.write_results(
        plan=plan,
        settings=settings,
        prepared=prepared,
        refs=refs,
        rows=rows,
        outcomes=outcomes,
        started_at=started_at,
    )
    create_table_artifact(
        table=summary_table(report.summary, "session"),
        key="retrieval-summary",
        description=f"Session-level retrieval of run {plan.run_id}; files in {plan.run_dir}",
    )
    create_markdown_artifact(report.markdown, key="run-summary")
    if report.failed:
        raise RunFailures(
            f"{len(report.failed)} question(s) failed: {', '.join(report.failed[:20])}; "
            f"results written to {report.run_dir}"
        )
    return {"run_id": report.run_id, "run_dir": str(report.run_dir), "summary": report.summary}
