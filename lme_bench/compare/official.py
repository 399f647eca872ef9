"""A benchmark's own official figures, paired per question across two runs: the part a
benchmark's `compare` report hook computes (lme_bench.benchmarks.report_hooks; LoCoMo's and
BEAM's in their packages under lme_bench.builtin_benchmarks), and which benchmark two runs are
of.

Two runs compare only on the same benchmark and the same dataset file (manifest.json's sha256);
otherwise CompareError names both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import report_hooks_of
from lme_bench.compare.load import CompareError, run_dir
from lme_bench.compare.paired import MetricComparison
from lme_bench.results.run_summary import RunSummary, SummaryError, read_run_summary

OTHER = "other"  # a run of a benchmark without official figures to pair


@dataclass(frozen=True, slots=True)
class OfficialPart:
    benchmark: str  # whose report hooks compared the runs
    metric: str  # what the figures are
    rows: list[MetricComparison]  # per category or ability, then the headline row
    judge: str | None = None  # whose scores, for a benchmark judged by its own scorer
    note: str | None = None  # why nothing was compared, when rows is empty
    source: str | None = None  # the benchmark's `[dataset] benchmark`, when given by path


def read_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CompareError(f"cannot read {path}: {exc}") from exc
    if not isinstance(found, dict):
        raise CompareError(f"{path} does not hold a JSON object")
    return found


def run_summary(results_dir: Path, run_id: str) -> RunSummary | None:
    """The run's summary.json (None: it has none); CompareError naming the file and field
    when it is not a finished run's summary."""
    path = run_dir(results_dir, run_id) / "summary.json"
    if not path.is_file():
        return None
    try:
        return read_run_summary(path)
    except SummaryError as exc:
        raise CompareError(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class RunBenchmark:
    name: str  # the benchmark with a `compare` hook whose section the run has, or `other`
    source: str | None = None  # its `[dataset] benchmark` when given by path


def run_benchmark(results_dir: Path, run_id: str) -> RunBenchmark | None:
    """The benchmark of the run's summary, when its report hooks (found by name, or from the
    source the summary records) compare runs and the summary holds its section; `other` for
    any other summary (LongMemEval or a benchmark without a `compare` hook), None without a
    summary.json."""
    summary = run_summary(results_dir, run_id)
    if summary is None:
        return None
    name, source = summary.benchmark, summary.benchmark_source
    if report_hooks_of(name, source).compare is not None and summary.section(name):
        return RunBenchmark(name, source)
    return RunBenchmark(OTHER)


def dataset_sha256(results_dir: Path, run_id: str) -> str | None:
    manifest = read_json(run_dir(results_dir, run_id) / "manifest.json")
    dataset = (manifest or {}).get("dataset") or {}
    sha = dataset.get("sha256") if isinstance(dataset, dict) else None
    return sha if isinstance(sha, str) else None


def check_same_data(
    results_dir: Path, run_a: str, run_b: str
) -> tuple[RunBenchmark | None, str | None]:
    """The runs' shared benchmark (None: not known), and a note when they were made on
    different dataset files (LongMemEval's oracle and S files ask the same questions over other
    haystacks: such runs compare, paired by question id, with the note shown); CompareError
    when the runs are of different benchmarks (as far as both runs recorded it)."""
    bench_a, bench_b = run_benchmark(results_dir, run_a), run_benchmark(results_dir, run_b)
    if bench_a and bench_b and bench_a.name != bench_b.name:
        raise CompareError(
            f"runs {run_a!r} ({_name(bench_a.name)}) and {run_b!r} ({_name(bench_b.name)}) are"
            " runs of different benchmarks: their figures are not comparable"
        )
    sha_a, sha_b = dataset_sha256(results_dir, run_a), dataset_sha256(results_dir, run_b)
    note = None
    if sha_a and sha_b and sha_a != sha_b:
        note = (
            f"runs {run_a!r} (dataset sha256 {sha_a[:12]}) and {run_b!r} (dataset sha256 "
            f"{sha_b[:12]}) were made on different dataset files: questions are paired by id,"
            " which is the same question only if both files hold it alike (manifest.json)"
        )
    return bench_a or bench_b, note


def _name(benchmark: str) -> str:
    return "LongMemEval or a plug-in benchmark" if benchmark == OTHER else benchmark
