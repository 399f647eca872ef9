"""Rerunning only the failed questions of a run: which they are, and keeping the rows of the
others, so the run's tables and summary still cover every question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import PreparedDataset, QuestionRef, select_questions
from lme_bench.ingest.question import IngestOutcome
from lme_bench.results.readback import read_hypotheses, read_ingest, read_retrieval, read_scores
from lme_bench.results.run_folder import RerunError, read_manifest
from lme_bench.results.run_mirror import pull_run, shared_title_key
from lme_bench.results.store_retry import store_retry
from lme_bench.run.finish import RunResults


def pulled_run(settings: Settings, run_id: str, required: bool = False) -> None:
    """With results at a URL, its finished run `run_id` copied into the working folder, so a
    rerun, `--failed-only` and the settings check read it as they read a local one."""
    url, retry = settings.run.results_url, store_retry(settings)
    if url:
        shared_title_key(url, settings.run.results_dir, retry)
        pull_run(url, settings.run.results_dir, run_id, required, retry)


def failed_question_ids(run_dir: Path, only: list[str] | None = None) -> list[str]:
    failed = list(read_manifest(run_dir).get("failed_question_ids") or [])
    if only is not None:
        failed = [q for q in failed if q in set(only)]
    if not failed:
        raise RerunError(f"{run_dir}: no failed questions to rerun")
    return failed


def merge_previous(
    run_dir: Path, prepared: PreparedDataset, refs: list[QuestionRef], results: RunResults
) -> list[QuestionRef]:
    """Add the run's earlier rows of every question not rerun now; the run's whole question
    list, in its order."""
    manifest = read_manifest(run_dir)
    rerun = {r.question_id for r in refs}
    every = select_questions(prepared, list(manifest["question_ids"]), None)
    kept = {r.question_id for r in every} - rerun

    def keep(rows: list[Any]) -> list[Any]:
        return [row for row in rows if row.question_id in kept]

    order = {r.question_id: i for i, r in enumerate(every)}

    def merged(new: list[Any] | None, old: list[Any]) -> list[Any] | None:
        if new is None:
            return None
        return sorted(keep(old) + new, key=lambda row: order[row.question_id])

    results.retrieval = merged(results.retrieval, read_retrieval(run_dir / "retrieval.parquet"))
    results.hypotheses = merged(results.hypotheses, read_hypotheses(run_dir / "hypotheses.parquet"))
    results.scores = merged(results.scores, read_scores(run_dir / "scores.parquet"))
    sessions: dict[str, list[Any]] = {}
    for record in keep(read_ingest(run_dir / "ingest.parquet")):
        sessions.setdefault(record.question_id, []).append(record)
    memories, entries = manifest.get("memories") or {}, manifest.get("memory_entries") or {}
    # a build shared with a question rerun now came back (from the cache) under the question
    # it was first ingested for: its earlier rows are not kept twice
    again = {o.question_id for o in results.outcomes}
    earlier = [
        IngestOutcome(q, memories.get(q, ""), int(entries.get(q, 0)), 0.0, sessions.get(q, []))
        for q in kept
        if q in memories and q not in again
    ]
    results.outcomes = sorted(earlier + results.outcomes, key=lambda o: order[o.question_id])
    errors = manifest.get("errors") or {}
    for question_id in kept & set(manifest.get("failed_question_ids") or []):
        results.failed.setdefault(question_id, errors.get(question_id, "failed"))
    return every
