"""The `longmemeval` flow: prepare questions, then per question ingest → retrieval / answer →
judge (each question moves on as soon as its previous stage is done), then the report.

It only sequences tasks; all work lives in the core package. Runs with no server to start
(Prefect's ephemeral mode) or against a Prefect server / deployment.
"""

from __future__ import annotations

import traceback
from datetime import UTC, datetime
from typing import Any

from prefect import flow, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.futures import PrefectFuture, wait
from prefect.task_runners import ThreadPoolTaskRunner

from lme_bench import pipeline
from lme_bench.report import RunResults
from lme_bench.request import RunRequest
from lme_bench.results.readback import read_hypotheses
from lme_bench.results.summary import summary_table
from tasks import benchmark as tasks


def run_longmemeval(request: RunRequest, concurrency: int) -> dict[str, Any]:
    """Run the flow here, `concurrency` questions in flight (what `lme-bench run` calls)."""
    runner: Any = ThreadPoolTaskRunner(max_workers=concurrency)
    result: dict[str, Any] = longmemeval.with_options(task_runner=runner)(request)
    return result


class RunFailures(RuntimeError):
    """Raised after the results are written when some questions failed."""


_DEFAULT_RUNNER: Any = ThreadPoolTaskRunner(max_workers=4)  # `lme-bench run` sets [run] concurrency


def _error_text(error: Any) -> str:
    if isinstance(error, BaseException):
        return "".join(traceback.format_exception_only(error)).strip()
    return str(error)


def _collect(futures: list[PrefectFuture[Any]], refs: list[Any], results: RunResults) -> list[Any]:
    """Each future's result, or None with the question's first error recorded."""
    values: list[Any] = []
    for ref, future in zip(refs, futures, strict=True):
        state = future.state
        if state.is_completed():
            values.append(future.result())
            continue
        error = (
            _error_text(future.result(raise_on_failure=False))
            if state.is_final()
            else "not run: an earlier stage of this question failed"
        )
        results.failed.setdefault(ref.question_id, error)
        values.append(None)
    return values


@flow(name="longmemeval", task_runner=_DEFAULT_RUNNER, log_prints=True)
def longmemeval(request: RunRequest | None = None) -> dict[str, Any]:
    request = request or RunRequest()
    started_at = datetime.now(UTC)
    settings = request.settings()
    stages = settings.stages
    plan = pipeline.plan_run(settings)
    prepared, refs = tasks.prepare_questions(plan, request.questions, request.limit)
    results = RunResults()

    ingested = tasks.ingest_question.map(refs, settings=unmapped(settings), run_id=plan.run_id)
    evaluated = answered = judged = None
    if "retrieval" in stages:
        evaluated = tasks.evaluate_question.map(refs, ingested, settings=unmapped(settings))
    if "answer" in stages:
        answered = tasks.answer_question.map(refs, ingested, settings=unmapped(settings))
    if "judge" in stages:
        if answered is not None:
            judged = tasks.judge_question.map(refs, answered, settings=unmapped(settings))
        else:  # judge the run's existing hypotheses again
            existing = {
                h.question_id: h for h in read_hypotheses(plan.run_dir / "hypotheses.parquet")
            }
            results.hypotheses = [
                existing[r.question_id] for r in refs if r.question_id in existing
            ]
            kept = [r for r in refs if r.question_id in existing]
            judged = tasks.judge_question.map(kept, results.hypotheses, settings=unmapped(settings))
    pending: list[PrefectFuture[Any]] = [
        f for group in (ingested, evaluated, answered, judged) if group for f in group
    ]
    wait(pending)

    results.outcomes = [o for o in _collect(list(ingested), refs, results) if o is not None]
    if evaluated is not None:
        rows = _collect(list(evaluated), refs, results)
        results.retrieval = [
            row
            for ref, found in zip(refs, rows, strict=True)
            for row in (found or pipeline.error_rows(ref, results.failed[ref.question_id]))
        ]
    if answered is not None:
        results.hypotheses = [h for h in _collect(list(answered), refs, results) if h is not None]
        results.failed.update(
            {h.question_id: h.error or "" for h in results.hypotheses if h.status != "ok"}
        )
    if judged is not None:
        judged_refs = refs if answered is not None else kept
        results.scores = [
            s for rows in _collect(list(judged), judged_refs, results) if rows for s in rows
        ]

    report = tasks.write_results(plan, settings, prepared, refs, results, started_at)
    if "report" in stages:
        if report.summary["session"]["questions"]:
            create_table_artifact(
                table=summary_table(report.summary, "session"),
                key="retrieval-summary",
                description=f"Session retrieval of run {plan.run_id}; files in {plan.run_dir}",
            )
        create_markdown_artifact(report.markdown, key="run-summary")
    if report.failed:
        raise RunFailures(
            f"{len(report.failed)} question(s) failed: {', '.join(report.failed[:20])}; "
            f"results written to {report.run_dir}"
        )
    return {"run_id": report.run_id, "run_dir": str(report.run_dir), "summary": report.summary}
