"""A run's report: summary.md assembled from the summary's data, the one-line headline, and
report.html; what `lme_bench.run.finish` writes once the tables are in place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import DEFAULT_BENCHMARK, report_hooks_of
from lme_bench.dataset.shards import QuestionRef
from lme_bench.report.cost import cost_markdown
from lme_bench.report.estimate import beside_spent_markdown
from lme_bench.report.html_memory import context_unchanged_text
from lme_bench.report.html_report import write_html_report
from lme_bench.report.ingest import empty_memory_markdown, empty_memory_text, totals_markdown
from lme_bench.report.judge_profile import successor_words
from lme_bench.report.labels import count, percent
from lme_bench.report.provenance_check import unverified_markdown, unverified_text
from lme_bench.report.qa import qa_markdown
from lme_bench.report.run_facts import run_facts_markdown
from lme_bench.report.summary import memory_markdown, speed_and_context_words, summary_markdown
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_scores import primary_judge
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.run_folder import rerun_command
from lme_bench.results.run_summary import RunSummary, write_summary_json
from lme_bench.results.summary import not_applicable
from lme_bench.retrieval.official_ids import GRANULARITIES, RetrievalRow


@dataclass(frozen=True, slots=True)
class RunReport:
    run_id: str
    run_dir: Path
    summary: dict[str, Any]
    markdown: str
    failed: list[str]


def headline(summary: dict[str, Any]) -> str:
    """One line of the run's leading figures: QA by the first LLM judge (official rule), the
    search latency (p50 / p95, the system's own) and the reader's context tokens a question,
    then session-level retrieval (official average); a benchmark's own figures lead (its report
    hooks' headline), its LLM judge's accuracy named as not the official metric where they say
    so; last, empty memories and hits that name sessions or turns never stored."""
    parts = []
    benchmark = summary.get("benchmark", DEFAULT_BENCHMARK)
    hooks = report_hooks_of(benchmark, summary.get("benchmark_source"))
    section = summary.get(benchmark)
    if section is not None and hooks.headline is not None:
        parts += hooks.call("headline", section)
    primary = primary_judge(summary["qa"]) if "qa" in summary else None
    overall = primary["overall"] if primary else None
    if overall and overall["accuracy"] is not None:
        counts = f"{count(overall['correct'])}/{count(overall['n'])}"
        if section is not None and hooks.verdicts_caveat and primary is not None:
            judged = "LLM-judge" if primary["kind"] == "llm" else "no-LLM fallback"
            parts.append(
                f"{judged} accuracy {percent(overall['accuracy'])} ({counts};"
                f" {hooks.verdicts_caveat})"
            )
        else:
            parts.append(
                f"QA overall {percent(overall['accuracy'])} ({counts})"
                + successor_words(summary["qa"].get("judge_profile"))
            )
    answers = summary.get("answers_file")
    if answers is None:
        parts += speed_and_context_words(summary)
    elif answers.get("missing"):  # answered elsewhere: no search or context seen here
        parts.append(f"{answers['missing']} questions without an answer, left out")
    session = summary.get("session", {}).get("overall", {})
    if session.get("n"):
        parts.append(f"session recall_all@5 {session['recall_all@5']:.3f} (n={session['n']})")
    elif not_applicable(summary.get("session") or {}):
        reasons = "; ".join(summary["session"].get("not_applicable_reasons") or {})
        parts.append(f"session retrieval not applicable ({reasons or 'no reason recorded'})")
    empty = empty_memory_text(summary.get("memory_health") or {})
    parts += [empty] if empty else []
    unverified = unverified_text(summary)
    return "; ".join([*parts, unverified] if unverified else parts) or "no figures"


def with_headline(markdown: str, line: str) -> str:
    """summary.md with the run's headline in its header: under the title and its banners,
    before the first section."""
    head, sections, rest = markdown.partition("\n## ")
    return f"{head.rstrip()}\n\n**Headline**: {line}.\n\n{sections.lstrip()}{rest}"


def _with_banner(markdown: str, banner: str) -> str:
    """`banner` as the paragraph after the summary's title."""
    title, _, rest = markdown.partition("\n\n")
    return f"{title}\n\n{banner}\n\n{rest}"


def _incomplete_banner(rerun: str, failed: list[str], total: int) -> str:
    """A line saying the run is incomplete: how many, which, and the command that redoes them."""
    shown = ", ".join(failed[:20]) + (" …" if len(failed) > 20 else "")
    return (
        f"**Incomplete run**: {len(failed)} of {total} questions failed ({shown}); the figures "
        f"below leave them out. `{rerun}` redoes them."
    )


def _answers_markdown(answers: dict[str, Any]) -> str:
    lines = [
        "## Answers",
        "",
        f"- file: {answers['path']} ({answers['format']}, sha256 {answers['sha256']})",
        f"- answered: {answers['answered']} questions; missing: {answers['missing']}",
    ]
    return "\n".join(lines) + "\n"


def _missing_banner(answers: dict[str, Any], missing: list[str]) -> str:
    """A line saying the answers file leaves questions of the dataset unanswered."""
    shown = ", ".join(missing[:20]) + (" …" if len(missing) > 20 else "")
    total = answers["answered"] + len(missing)
    return (
        f"**Missing answers**: {len(missing)} of the dataset's {total} questions have no answer"
        f" in {answers['name']} ({shown}); every figure below is over the"
        f" {answers['answered']} answered questions only, none counts a missing one as wrong."
    )


def run_markdown(
    summary: dict[str, Any],
    title: str,
    run_id: str,
    questions: int,
    results_dir: Path | str = "results",
) -> str:
    """summary.md: retrieval, the memory system, ingestion, QA, cost and the estimate beside
    what was spent, with banners for empty memories and failed questions under the title."""
    heading, _, retrieval = summary_markdown(summary, title).partition("\n\n")
    if not any(summary[g]["questions"] for g in GRANULARITIES):  # e.g. an ingest-only run
        retrieval = "## Retrieval\n\nNot run: this run folder holds no retrieval rows.\n"
    answers = summary.get("answers_file")
    if answers is not None:  # answered by another harness: no memory, ingestion or retrieval here
        sections = [
            part for part in (run_facts_markdown(summary), _answers_markdown(answers)) if part
        ]
        markdown = f"{heading}\n\n" + "\n".join(sections)
    else:
        sections = [run_facts_markdown(summary), memory_markdown(summary)]
        markdown = f"{heading}\n\n" + "\n".join(p for p in sections if p) + f"\n{retrieval}"
        markdown += "\n" + totals_markdown(summary["ingestion"])
    if summary.get("qa"):
        benchmark = summary.get("benchmark", DEFAULT_BENCHMARK)
        markdown += "\n" + qa_markdown(summary["qa"], benchmark, summary.get("benchmark_source"))
    if summary.get("cost"):
        markdown += "\n" + "\n".join(cost_markdown(summary["cost"])) + "\n"
    if summary.get("estimate"):
        markdown += "\n" + beside_spent_markdown(summary["estimate"])
    unverified = unverified_markdown(summary)
    if unverified:
        markdown = _with_banner(markdown, unverified)
    health = summary.get("memory_health") or {}
    unchanged = context_unchanged_text(health)
    if unchanged:
        rule = health["context_unchanged"]["rule"]
        markdown = _with_banner(
            markdown,
            f"**Context never updated**: {unchanged}. Flagged: {rule}; report.html shows what"
            " each memory holds.",
        )
    if health.get("empty"):
        markdown = _with_banner(markdown, empty_memory_markdown(health))
    missing = (summary.get("answers_file") or {}).get("missing_ids") or []
    if missing:
        markdown = _with_banner(markdown, _missing_banner(summary["answers_file"], missing))
    failed = (summary.get("incomplete") or {}).get("question_ids") or []
    if failed:
        rerun = rerun_command(run_id, results_dir)
        markdown = _with_banner(markdown, _incomplete_banner(rerun, failed, questions))
    return markdown


def write_summary(run_dir: Path, markdown: str, summary: Mapping[str, Any]) -> None:
    """summary.md and summary.json (through RunSummary, which checks its fields), each
    atomically: every run writes them, whichever stages it ran (an ingest-only run's hold
    its ingestion)."""
    typed = RunSummary.model_validate(summary)
    write_text_atomically(run_dir / "summary.md", markdown)
    write_summary_json(run_dir / "summary.json", typed)


def write_report(
    run_dir: Path,
    title: str,
    markdown: str,
    summary: dict[str, Any],
    refs: Sequence[QuestionRef],
    tables: tuple[Sequence[RetrievalRow], Sequence[HypothesisRow], Sequence[ScoreRow]],
    failed: dict[str, str],
    excerpts: Mapping[str, Any] | None = None,
) -> None:
    """summary.md, summary.json and report.html, each atomically; `tables`: the run's
    retrieval, hypothesis and score rows; `excerpts`: what each build's memory held."""
    retrieval, hypotheses, scores = tables
    write_summary(run_dir, markdown, summary)
    write_html_report(
        run_dir, title, summary, refs, retrieval, hypotheses, scores, failed, excerpts
    )
