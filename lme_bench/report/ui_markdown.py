"""The run report as shown in the Prefect UI: the summary, cost, and links to the result files."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any
from urllib.parse import quote

from lme_bench.benchmarks.report_hooks import DEFAULT_BENCHMARK, report_hooks_of
from lme_bench.report.cost import cost_markdown
from lme_bench.report.figure_rows import (
    RETRIEVAL_HEADER,
    accuracy_cells,
    accuracy_groups,
    retrieval_rows,
)
from lme_bench.report.html_report import REPORT_NAME
from lme_bench.report.labels import count, interval_text
from lme_bench.report.run_report import RunReport
from lme_bench.report.summary import SHOWN_METRICS, system_calls_words
from lme_bench.report.ui_tables import split_wide_tables
from lme_bench.results.run_folder import rerun_command

RESULT_FILES = (
    REPORT_NAME,
    "summary.md",
    "summary.json",
    "manifest.json",
    "config.json",
    "retrieval.parquet",
    "ingest.parquet",
    "hypotheses.parquet",
    "scores.parquet",
    "memory_excerpts.json",
    "hypotheses.jsonl",
)


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


QA_TABLE_NOTE = (
    "accuracy: percent, then (correct / judged); task-averaged: the mean of the per-type"
    " accuracies; 95% interval: stratified bootstrap, flagged under 30 questions"
)


def qa_table(qa: dict[str, Any]) -> list[dict[str, str]]:
    """One row per judge and question type, then task-averaged, overall and abstention: the
    official-rule figures in report.html's words and formats (percent, correct of judged,
    intervals with their flags), narrowed to fit the UI's page: accuracy and its counts in
    one column, task-averaged under its short name (QA_TABLE_NOTE says what they are), each
    judge's questions without a verdict in the description (`judges_words`)."""
    rows = []
    for judge, found in qa["judges"].items():
        for name, accuracy in accuracy_groups(found):
            row_name, shown, counts = accuracy_cells(name, accuracy)
            rows.append(
                {
                    "judge": judge,
                    "question type": name if name == "task-averaged" else row_name,
                    "accuracy": f"{shown} ({counts})",
                    "95% interval": interval_text(accuracy.get("ci95"), accuracy["n"]),
                }
            )
    return rows


def qa_artifact_words(summary: dict[str, Any]) -> str:
    """What the UI's QA table shows: the verdicts' accuracy by question type, and when the
    benchmark's own section is there and says the verdicts are not its official metric
    (its report hooks' `verdicts_caveat`), that caveat."""
    benchmark = summary.get("benchmark", DEFAULT_BENCHMARK)
    hooks = report_hooks_of(benchmark, summary.get("benchmark_source"))
    caveat = hooks.verdicts_caveat if summary.get(benchmark) else None
    if caveat:
        return (
            f"LLM-judge accuracy by question type, {caveat} (its official figures are in"
            f" run-summary); {QA_TABLE_NOTE}"
        )
    return f"QA accuracy by question type; {QA_TABLE_NOTE}"


def judges_words(qa: dict[str, Any]) -> str:
    """ "judge openai:gpt-4o (2 questions without a verdict, left out)", one per judge."""
    parts = []
    for judge, found in qa["judges"].items():
        n = found["not_judged"]
        parts.append(
            f"judge {judge} ({count(n)} question{'s' * (n != 1)} without a verdict, left out)"
        )
    return "; ".join(parts)


def retrieval_table(summary: dict[str, Any], granularity: str) -> list[dict[str, str]]:
    """The retrieval summary's rows of one granularity in report.html's words and formats,
    reshaped to fit the UI's page: a row per question type and k (at 5 first, then at 10),
    a column per metric."""
    header = RETRIEVAL_HEADER[:2]
    by_k: dict[str, list[int]] = {}
    for column, metric in enumerate(SHOWN_METRICS, start=len(header)):
        by_k.setdefault(metric.partition("@")[2], []).append(column)
    rows = retrieval_rows(summary, granularity)
    table = []
    for k, columns in by_k.items():
        for cells in rows:
            row = dict(zip(header, cells, strict=False)) | {"top k": k}
            for column in columns:
                row[RETRIEVAL_HEADER[column].removesuffix(f" @{k}")] = cells[column]
            table.append(row)
    return table


def file_link(path: Path, results_dir: Path, link_base: str | None) -> str:
    """Where the UI opens a result file: under `link_base` (the URL serving `results_dir`),
    else a file:// URL, which a browser does not open from an http page."""
    if link_base is None:
        return path.resolve().as_uri()
    relative = path.resolve().relative_to(results_dir.resolve())
    return link_base + quote(relative.as_posix())


def _cost_lines(summary: dict[str, Any]) -> list[str]:
    qa = summary.get("qa") or {}
    answers, cost = qa.get("answers"), summary.get("cost")
    lines = []
    if answers:
        lines.append(
            f"- answering: {count(answers['llm_calls'])} model calls, "
            f"{count(answers['input_tokens'])} input and {count(answers['output_tokens'])} "
            "output tokens"
        )
    ingestion = summary.get("ingestion") or {}
    if ingestion.get("llm_calls"):
        lines.append(f"- ingestion (memory agent): {count(ingestion['llm_calls'])} model calls")
    system = summary.get("memory_system")
    if system:
        lines.append(f"- the memory system's own calls: {system_calls_words(system)}")
    if cost:
        lines += ["- " + line for line in cost_markdown(cost)]
    return lines


def report_markdown(report: RunReport, link_base: str | None = None) -> str:
    """A link to report.html, the run's summary markdown (wide tables split to fit the UI's
    page), then cost and links to every file
    the run wrote (under `link_base` when set, see `file_link`)."""
    names = [n for n in RESULT_FILES if (report.run_dir / n).is_file()]
    names += sorted(  # the rest: the benchmark's official files (eval-results, exports)
        name
        for name in (p.relative_to(report.run_dir).as_posix() for p in _files(report.run_dir))
        if name not in names and not any(part.startswith(".") for part in name.split("/"))
    )
    results_dir = report.run_dir.parent
    links = [
        f"- [{name}]({file_link(report.run_dir / name, results_dir, link_base)})" for name in names
    ]
    parts = []
    if (report.run_dir / REPORT_NAME).is_file():
        page = file_link(report.run_dir / REPORT_NAME, results_dir, link_base)
        parts += [
            f"**[The run report]({page})**: every question with its answer, verdicts and "
            "retrieved turns; filters for wrong answers, failed questions, one type.",
            "",
        ]
    parts += [split_wide_tables(report.markdown.rstrip()), ""]
    cost = _cost_lines(report.summary)
    if cost:
        parts += ["## Cost", "", *cost, ""]
    if report.failed:
        parts += [
            "## Failed questions",
            "",
            f"{len(report.failed)}: {', '.join(report.failed[:50])}",
            f"Rerun them with `{rerun_command(report.run_id, report.run_dir.parent)}`"
            " (successes come from the cache).",
            "",
        ]
    parts += ["## Result files", "", f"Folder: `{report.run_dir.resolve()}`", "", *links, ""]
    return "\n".join(parts)


def compare_markdown(
    markdown: str, paths: list[Path], results_dir: Path | None = None, link_base: str | None = None
) -> str:
    """A comparison for the UI: its chart inline (a data URI, so no file server is needed),
    the report (wide tables split to fit the UI's page), and links to its files (under
    `link_base` when set, see `file_link`)."""
    png = next((p for p in paths if p.suffix == ".png"), None)
    parts = []
    if png is not None:
        data = base64.b64encode(png.read_bytes()).decode()
        parts += [f"![the comparison chart, both runs](data:image/png;base64,{data})", ""]
    parts += [split_wide_tables(markdown.rstrip()), "", "## Files", ""]
    base = link_base if results_dir is not None else None
    parts += [f"- [{p.name}]({file_link(p, results_dir or p.parent, base)})" for p in paths]
    return "\n".join(parts) + "\n"
