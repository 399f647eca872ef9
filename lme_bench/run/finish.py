"""Writing a run's folder: the tables of the stages that ran (earlier ones are kept and read
back), the official exports, summary.md / summary.json and manifest.json, each atomically."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.scoring_hooks import (
    DEFAULT_BENCHMARK,
    BenchmarkScoring,
    FiguresInput,
    scoring_of,
)
from lme_bench.config.settings import Settings
from lme_bench.dataset.known import describe_release
from lme_bench.dataset.shards import PreparedDataset, QuestionRef
from lme_bench.ingest.checkpoint import checkpointed_sessions
from lme_bench.ingest.question import IngestOutcome
from lme_bench.ingest.records import SessionRecord
from lme_bench.ingest.titles import memory_titles
from lme_bench.judge.calibration.successor import manifest_record, successor_record
from lme_bench.judge.family_requests import judge_request_shapes, own_judge_request_shapes
from lme_bench.judge.prompts import judge_prompts
from lme_bench.qa.reader import load_qa_prompts
from lme_bench.report.regression import with_baseline
from lme_bench.report.run_report import (
    RunReport,
    headline,
    run_markdown,
    with_headline,
    write_report,
    write_summary,
)
from lme_bench.results.batch_jobs import answered_in_batch_jobs, manifest_entries, read_jobs
from lme_bench.results.cost import run_cost, system_usage
from lme_bench.results.estimates import beside_spent, spent_by_stage
from lme_bench.results.ingest_table import (
    ingest_table,
    ingest_totals,
    memory_health,
    question_health,
)
from lme_bench.results.manifest import build_manifest, write_manifest
from lme_bench.results.memory_excerpts import record_excerpts
from lme_bench.results.memory_identity import memory_identity
from lme_bench.results.qa_records import PromptSource, QaReport
from lme_bench.results.qa_scores import primary_judge, qa_summary
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow, hypotheses_table, scores_table
from lme_bench.results.readback import (
    read_hypotheses,
    read_ingest,
    read_retrieval,
    read_scores,
)
from lme_bench.results.recorded_settings import recorded_moves
from lme_bench.results.run_mirror import publish_run, pull_finished_runs
from lme_bench.results.series import config_digest, series_name
from lme_bench.results.store_retry import store_retry
from lme_bench.results.summary import search_latency, summarize_retrieval
from lme_bench.results.tables import retrieval_table, write_parquet
from lme_bench.retrieval.official_ids import GRANULARITIES, RetrievalRow, has_evidence_turns
from lme_bench.run.attribution import attribute_all
from lme_bench.run.baseline import against_baseline, choose_baseline
from lme_bench.run.cache_keys import memory_scope
from lme_bench.run.estimate import calls_models, estimate_run
from lme_bench.run.steps import RunPlan, bundled_sample, search_description, search_label

__all__ = ["RunReport", "RunResults", "headline", "write_run"]


@dataclass
class RunResults:
    """What the stages of this run produced; None: the stage did not run this time."""

    outcomes: list[IngestOutcome] = field(default_factory=list)
    retrieval: list[RetrievalRow] | None = None
    hypotheses: list[HypothesisRow] | None = None
    scores: list[ScoreRow] | None = None
    failed: dict[str, str] = field(default_factory=dict)  # question id -> first error
    # memory id -> build, of the builds whose ingestion failed or stopped before it finished
    unfinished_memories: dict[str, str] = field(default_factory=dict)
    # answers read from a file instead of answered (lme-bench score): the file, its format and
    # sha256, and the dataset's questions it does not answer (lme_bench.score)
    answers_file: dict[str, Any] | None = None


def _unfinished_sessions(settings: Settings, results: RunResults) -> list[SessionRecord]:
    """The sessions that ingestions which did not finish checkpointed: their model calls,
    tokens and writes were spent, so the summary, the cost and ingest.parquet count them."""
    if "ingest" not in settings.stages:
        return []
    path = settings.run.results_dir / "checkpoints.sqlite"
    return checkpointed_sessions(path, list(results.unfinished_memories), settings.ingest.mode)


def _own_judge_parts(settings: Settings, benchmarks: list[str]) -> dict[str, Any]:
    """Per benchmark of the run with a judge of its own, what that judge reads its prompts
    from (its `cache_part`: BEAM's, the digests of the checkout's prompt files), so `verify
    --rejudge` can tell the same judge again. The judge stage's cache key is not this."""
    parts = {}
    for name in benchmarks:
        own = scoring_of(name, settings.dataset.benchmark).own_judge
        part = own.cache_part(settings) if own is not None else None
        if part is not None:
            parts[name] = part
    return parts


def _judge_requests(settings: Settings, benchmarks: list[str]) -> dict[str, Any]:
    """The manifest's records of the judges' requests: `judge_requests`, the LLM judge's
    yes/no request, when some question's benchmark has no judge of its own (or the run has no
    question), and `own_judge_requests.<benchmark>` for each benchmark whose own judge says
    what it sends (BEAM's: its rubric judge's calls), kept out when there is none."""
    if "judge" not in settings.stages:
        return {"judge_requests": {}}
    owns = {name: scoring_of(name, settings.dataset.benchmark).own_judge for name in benchmarks}
    verdicts = not owns or any(own is None for own in owns.values())
    found: dict[str, Any] = {"judge_requests": judge_request_shapes(settings) if verdicts else {}}
    own_requests = {
        name: shapes
        for name, own in owns.items()
        if own is not None and (shapes := own_judge_request_shapes(own, settings))
    }
    if own_requests:
        found["own_judge_requests"] = own_requests
    return found


def _prompt_hashes(settings: Settings, benchmarks: list[str]) -> dict[str, Any]:
    hashes: dict[str, Any] = {}
    if "answer" in settings.stages:
        qa = load_qa_prompts(settings.qa.prompts_dir)
        hashes["qa"] = {"version": qa.version, "sha256": qa.hashes}
    if "judge" in settings.stages:
        judge = judge_prompts(settings.judge)
        hashes["judge"] = {
            "version": judge.version,
            "source": judge.source,
            "description": judge.description,
            "sha256": judge.hashes,
        }
        if judge.script_sha256:
            hashes["judge"]["script_sha256"] = judge.script_sha256
        own = _own_judge_parts(settings, benchmarks)
        if own:
            hashes["own_judge"] = own
    return hashes


def _judge_prompt_source(settings: Settings) -> PromptSource:
    prompts = judge_prompts(settings.judge)
    return {
        "source": prompts.source,
        "description": prompts.description,
        "script_sha256": prompts.script_sha256,
    }


def _judge_profile(settings: Settings, qa: QaReport) -> dict[str, Any] | None:
    """The successor judge's profile figures beside its accuracy ([judge] profile), when the
    run's judge gave verdicts."""
    judged = qa["judges"].get(settings.models.judge or "")
    if settings.judge.profile is None or judged is None:
        return None
    return successor_record(settings.judge.profile, dict(judged["per_type"]))


def _memory(settings: Settings, summary: dict[str, Any]) -> dict[str, Any]:
    """The memory system searched: backend, parameters and their digest, the search, and how
    its hits were mapped, per granularity."""
    return {
        **memory_identity(settings.redacted()["memory"]),
        "search": search_label(settings),
        "provenance": {g: summary[g]["provenance"] for g in GRANULARITIES},
    }


def _excerpts(outcomes: list[IngestOutcome], refs: list[QuestionRef]) -> dict[str, Any]:
    """By memory build, what this run's ingestions read back from their memories."""
    build_of = {r.question_id: r.build for r in refs}
    found: dict[str, Any] = {}
    for outcome in outcomes:
        excerpt = getattr(outcome, "memory_excerpt", None)  # None in results cached before it
        if hasattr(outcome, "memory_excerpt"):
            build = build_of.get(outcome.question_id, outcome.question_id)
            found[build] = excerpt.to_json() if excerpt is not None else None
    return found


def _scoring(benchmark: str, settings: Settings) -> BenchmarkScoring:
    return scoring_of(benchmark, settings.dataset.benchmark)


def write_run(
    plan: RunPlan,
    settings: Settings,
    prepared: PreparedDataset,
    refs: list[QuestionRef],
    results: RunResults,
    started_at: datetime,
    publish: bool = True,
) -> RunReport:
    """The run's tables, summary and manifest in its folder; with results at a URL, copied
    there too unless `publish` is False (a shard's part of a run: its parent writes the run)."""
    run_dir, run_id = plan.run_dir, plan.run_id
    unfinished = _unfinished_sessions(settings, results)
    records = [record for outcome in results.outcomes for record in outcome.sessions]
    records += unfinished
    if results.retrieval is not None:
        write_parquet(run_dir / "retrieval.parquet", retrieval_table(run_id, results.retrieval))
    retrieval = (
        results.retrieval
        if results.retrieval is not None
        else read_retrieval(run_dir / "retrieval.parquet")
    )
    if records:
        write_parquet(run_dir / "ingest.parquet", ingest_table(run_id, records))
    sessions = records or read_ingest(run_dir / "ingest.parquet")  # this run's, or recorded
    benchmark = refs[0].benchmark if refs else DEFAULT_BENCHMARK  # one dataset, one benchmark
    asked: dict[str, list[QuestionRef]] = {}  # by benchmark, in the questions' order
    for ref in refs:
        asked.setdefault(ref.benchmark, []).append(ref)
    scorings = {name: _scoring(name, settings) for name in asked}
    averages = _scoring(benchmark, settings).longmemeval_averages
    summary = summarize_retrieval(retrieval, longmemeval=averages)
    summary["benchmark"] = benchmark
    configured = settings.dataset.benchmark
    if configured is not None and ":" in configured:  # given by path: its hooks are found there
        summary["benchmark_source"] = configured
    shared_builds = any(r.build != r.question_id for r in refs)
    summary["ingestion"] = ingest_totals(records, shared_builds)
    summary["ingestion"]["unfinished_sessions"] = len(unfinished)
    checked = {o.question_id: o.ingest_health for o in results.outcomes}
    summary["memory_health"] = memory_health(question_health(sessions, checked))
    empty_memories = frozenset(summary["memory_health"]["question_ids"])
    summary["memory"] = _memory(settings, summary)
    summary["search_latency"] = search_latency(retrieval)
    title = f"lme-bench run {run_id} (search: {search_label(settings)})"
    if results.answers_file is not None:
        summary["answers_file"] = results.answers_file
        title = f"lme-bench score {run_id} (answers: {results.answers_file['name']})"
    if results.hypotheses is not None:
        write_parquet(run_dir / "hypotheses.parquet", hypotheses_table(run_id, results.hypotheses))
    verdicts: list[ScoreRow] | None = None
    if results.scores is not None:
        hypotheses = results.hypotheses or []
        ingested = {o.question_id for o in results.outcomes}  # a build's first question
        built = {r.build for r in refs if r.question_id in ingested}
        ingested = {r.question_id for r in refs if r.build in built}  # every question of it
        if results.answers_file is not None:  # answered elsewhere, from memories of its own
            ingested = {r.question_id for r in refs}
        by_id = {r.question_id: r for r in refs}
        attribute_all(
            results.scores,
            hypotheses,
            ingested,
            empty_memories,
            has_evidence=lambda q: q in by_id and has_evidence_turns(by_id[q].load()),
        )
        write_parquet(run_dir / "scores.parquet", scores_table(run_id, results.scores))
        scored_own = {n for n, s in scorings.items() if s.own_judge is not None}  # no verdicts
        own = {r.question_id for r in refs if r.benchmark in scored_own}
        types = {r.question_id: r.question_type for r in refs}
        prompts = _judge_prompt_source(settings)
        verdicts = [s for s in results.scores if s.question_id not in own]
        abstaining = {r.question_id for r in refs if r.is_abstention}  # LoCoMo's adversarial too
        summary["qa"] = qa_summary(verdicts, hypotheses, types, prompts, abstaining)
        profiled = _judge_profile(settings, summary["qa"])
        if profiled is not None:
            summary["qa"]["judge_profile"] = profiled
    primary = primary_judge(summary["qa"]) if "qa" in summary else None
    system = system_usage(results.outcomes, settings, unfinished)
    if system is not None:
        summary["memory_system"] = system
    summary["cost"] = run_cost(
        agent_model=settings.models.agent if settings.ingest.mode != "raw" else None,
        memory_system=system,
        records=sessions,
        hypotheses=results.hypotheses or [],
        scores=results.scores or [],
        questions=len(refs),
        correct=primary["overall"]["correct"] if primary else None,
        prices=settings.prices,
        batch_factors=answered_in_batch_jobs(read_jobs(run_dir, "judge")),
        answer_factors=answered_in_batch_jobs(read_jobs(run_dir, "answer")),
    )
    for row in results.retrieval or []:
        if row.status == "error":  # not-applicable rows are no failure
            results.failed.setdefault(row.question_id, row.error or "")
    if calls_models(settings):
        estimate = estimate_run((r.load() for r in refs), settings, builds=[r.build for r in refs])
        spent = spent_by_stage(sessions, results.hypotheses or [], results.scores or [])
        summary["estimate"] = beside_spent(estimate, spent)
    summary["run"] = {
        "dataset": {"path": str(prepared.path), "sha256": prepared.sha256},
        "wall_seconds": round((datetime.now(UTC) - started_at).total_seconds(), 3),
    }
    failed = sorted(results.failed)
    summary["incomplete"] = {"failed": len(failed), "question_ids": failed}
    results_at = settings.run.results_url or run_dir.parent  # as a rerun names it
    markdown = run_markdown(summary, title, run_id, len(refs), results_at)
    for name, scoring in scorings.items():  # each benchmark's official files and figures
        if scoring.run_figures is None:
            continue
        given = FiguresInput(
            run_dir=run_dir,
            refs=asked[name],
            retrieval=retrieval,
            hypotheses=results.hypotheses,
            scores=results.scores,
            verdicts=verdicts,
            qa=summary.get("qa"),  # an LLM judge's accuracy, beside official figures
            settings=settings,
        )
        figures = scoring.run_figures(given)
        if figures is not None and figures.section is not None:
            summary[name] = figures.section
            markdown += figures.markdown
    summary["headline"] = headline(summary)  # accuracy, search latency, context tokens
    markdown = with_headline(markdown, summary["headline"])
    excerpts = record_excerpts(run_dir, _excerpts(results.outcomes, refs))
    series = plan.request.get("series") or series_name(settings, plan.request.get("config"))
    benchmarks = ", ".join(sorted({r.benchmark for r in refs})) or plan.benchmark
    compare_to = plan.request.get("compare_to")
    if compare_to and "report" in settings.stages:
        ground = (benchmarks, prepared.sha256)
        if settings.run.results_url:  # the earlier runs of the series are at the URL
            pull_finished_runs(settings.run.results_url, run_dir.parent, store_retry(settings))
        chosen = choose_baseline(run_dir, compare_to, series, ground, started_at.isoformat())
        write_summary(run_dir, markdown, summary)  # this run as compare reads it
        summary["baseline"] = against_baseline(run_dir, settings, chosen)
        markdown = with_baseline(markdown, summary["baseline"])
    if "report" in settings.stages:
        hypotheses_read = (
            results.hypotheses
            if results.hypotheses is not None
            else read_hypotheses(run_dir / "hypotheses.parquet")
        )
        scores_read = (
            results.scores
            if results.scores is not None
            else read_scores(run_dir / "scores.parquet")
        )
        tables = (retrieval, hypotheses_read, scores_read)
        write_report(run_dir, title, markdown, summary, refs, tables, results.failed, excerpts)
    else:  # no report.html, but the tables of what ran: the command line prints summary.md
        write_summary(run_dir, markdown, summary)
    benchmarks_of_questions = sorted({r.benchmark or DEFAULT_BENCHMARK for r in refs})
    manifest = build_manifest(
        run_id=run_id,
        series=series,
        schedule=plan.request.get("schedule"),
        benchmark=benchmarks,
        config_digest=config_digest(settings),
        request=plan.request,
        stages=list(settings.stages),
        dataset={
            "path": prepared.path,
            "sha256": prepared.sha256,
            "release": describe_release(prepared.sha256, Path(prepared.path), bundled_sample()),
            "questions": len(refs),
        },
        question_ids=[r.question_id for r in refs],
        failed_question_ids=failed,
        errors={q: results.failed[q] for q in failed},
        ingestion={
            "mode": settings.ingest.mode,
            "agent_model": settings.models.agent if settings.ingest.mode != "raw" else None,
            "entries": sum(o.entries for o in results.outcomes),
            "empty_memories": sorted(empty_memories),
            **summary["ingestion"],
        },
        models={
            "agent": settings.models.agent,
            "qa": settings.models.qa,
            "judge": settings.models.judge,
            "second_judge": settings.judge.second_model,
            **_judge_requests(settings, benchmarks_of_questions),
        },
        prompts=_prompt_hashes(settings, benchmarks_of_questions),
        batches=manifest_entries(run_dir),
        judge_profile=(
            manifest_record(summary["qa"]["judge_profile"])
            if "judge_profile" in summary.get("qa", {})
            else None
        ),
        memories={o.question_id: o.memory_id for o in results.outcomes},
        memory_titles=memory_titles(  # title -> build (a LongMemEval question's is itself)
            list(dict.fromkeys(r.build for r in refs)),
            memory_scope(settings, run_id),
            settings.run.results_dir,
        ),
        memory_entries={o.question_id: o.entries for o in results.outcomes},
        search=search_description(settings),
        endpoint_moves=recorded_moves(run_dir),  # model servers named elsewhere for a rerun
        config=settings.redacted(),
        started_at=started_at.isoformat(),
        finished_at=datetime.now(UTC).isoformat(),
    )
    write_manifest(run_dir / "manifest.json", manifest)
    if publish:  # a run at a URL lands there whole
        publish_run(settings.run.results_url, run_dir, store_retry(settings))
    return RunReport(run_id, run_dir, summary, markdown, failed)
