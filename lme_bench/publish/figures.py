"""The headline figures again, from a bundle's own rows, with the functions the run computed
summary.json with: retrieval (`summarize_retrieval`, `search_latency`), the judged accuracy
per judge (`qa_summary`) and the headline line (`headline`)."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.scoring_hooks import BenchmarkScoring, scoring_of
from lme_bench.publish.errors import PublishError
from lme_bench.report.run_report import headline
from lme_bench.results.qa_scores import qa_summary
from lme_bench.results.readback import read_hypotheses, read_retrieval, read_scores
from lme_bench.results.run_summary import RunSummary, SummaryError, parse_summary_bytes
from lme_bench.results.summary import search_latency, summarize_retrieval
from lme_bench.retrieval.official_ids import GRANULARITIES

# Of each judge's record, the figures: accuracy, counts and interval of each group.
ACCURACY_GROUPS = ("overall", "task_averaged", "abstention", "per_type", "readable_only")


Tables = tuple[list[Any], list[Any], list[Any]]
"""A bundle's retrieval, answer and score rows."""


def bundle_tables(files: Mapping[str, bytes]) -> Tables:
    with tempfile.TemporaryDirectory(prefix="lme-verify-") as scratch:
        folder = Path(scratch)
        for name in ("retrieval.parquet", "hypotheses.parquet", "scores.parquet"):
            if name in files:
                (folder / name).write_bytes(files[name])
        retrieval = read_retrieval(folder / "retrieval.parquet")
        hypotheses = (
            read_hypotheses(folder / "hypotheses.parquet") if "hypotheses.parquet" in files else []
        )
        scores = read_scores(folder / "scores.parquet") if "scores.parquet" in files else []
    return retrieval, hypotheses, scores


def _qa(
    qa: dict[str, Any], retrieval: list[Any], hypotheses: list[Any], scores: list[Any]
) -> dict[str, Any]:
    types = {r.question_id: r.question_type for r in (*retrieval, *hypotheses, *scores)}
    abstaining = {r.question_id for r in (*retrieval, *hypotheses, *scores) if r.is_abstention}
    judges = qa["judges"]
    recorded = next((j.get("prompts") for j in judges.values() if j.get("prompts")), None)
    verdicts = [s for s in scores if s.score is None]  # a graded rubric has its own section
    return dict(qa_summary(verdicts, hypotheses, types, recorded, abstaining))


def summary_of(path: Path, data: bytes) -> RunSummary:
    """The run summary `data` holds (the file at `path`); PublishError naming the field."""
    try:
        return parse_summary_bytes(data, path)
    except SummaryError as exc:
        raise PublishError(str(exc)) from exc


def recomputed(summary: RunSummary, tables: Tables, scoring: BenchmarkScoring) -> dict[str, Any]:
    """The parts of summary.json the bundle's rows (`bundle_tables`) give again, with the
    run's benchmark's scoring hooks (`bundle_scoring`)."""
    retrieval, hypotheses, scores = tables
    again: dict[str, Any] = {}
    if retrieval:
        figures = summarize_retrieval(retrieval, longmemeval=scoring.longmemeval_averages)
        again |= {g: figures[g] for g in GRANULARITIES}
        again["search_latency"] = search_latency(retrieval)
    if summary.qa is not None and scores:
        qa = _qa(summary.qa, retrieval, hypotheses, scores)
        again["qa"] = {
            "judges": {
                name: {g: record[g] for g in ACCURACY_GROUPS if g in record}
                for name, record in qa["judges"].items()
            },
            "answers": qa["answers"],
        }
    return again


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple) and any(isinstance(v, dict | list) for v in value):
        for i, inner in enumerate(value):
            yield from _leaves(inner, f"{path}[{i}]")
    else:
        yield path, list(value) if isinstance(value, tuple) else value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, int | float) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) or (math.isnan(a) and b != b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _lookup(summary: dict[str, Any], path: str) -> Any:
    recorded: Any = summary
    for part in path.replace("]", "").replace("[", ".").split("."):
        if isinstance(recorded, list) and part.isdigit() and int(part) < len(recorded):
            recorded = recorded[int(part)]
        elif isinstance(recorded, dict) and part in recorded:
            recorded = recorded[part]
        else:
            return _MISSING
    return recorded


_MISSING = object()


def _merged(recorded: Any, again: Any) -> Any:
    """`recorded` with the recomputed parts in place of its own."""
    if isinstance(recorded, dict) and isinstance(again, dict):
        return {
            k: _merged(recorded.get(k), again[k]) if k in again else v
            for k, v in {**recorded, **again}.items()
        }
    return again


def configured_benchmark(files: Mapping[str, bytes]) -> str | None:
    """The run's `[dataset] benchmark` as config.json records it."""
    config = json.loads(files["config.json"]) if "config.json" in files else {}
    configured = ((config.get("settings") or {}).get("dataset") or {}).get("benchmark")
    return configured if isinstance(configured, str) else None


def hooks_source(summary: RunSummary, files: Mapping[str, bytes]) -> str | None:
    """Where the run found its benchmark's class, so a plug-in's hooks are found again:
    config.json's `[dataset] benchmark`, else summary.json's `benchmark_source`."""
    return configured_benchmark(files) or summary.benchmark_source


def bundle_scoring(summary: RunSummary, files: Mapping[str, bytes]) -> BenchmarkScoring:
    """The scoring hooks of the bundle's benchmark."""
    return scoring_of(summary.benchmark, hooks_source(summary, files))


def differences(
    summary: RunSummary,
    tables: Tables,
    scoring: BenchmarkScoring,
    section: dict[str, Any] | None = None,
) -> tuple[list[str], int]:
    """The figures of summary.json that its rows do not give (each named, with both values),
    and how many figures were compared; `section`: the benchmark's own section computed again
    (lme_bench.publish.sections), compared with summary.json's under its name."""
    again = recomputed(summary, tables, scoring)
    if section is not None:
        again[summary.benchmark] = section
    found, compared = [], 0
    written = summary.model_dump(exclude_unset=True)
    for path, value in _leaves(again, ""):
        recorded = _lookup(written, path)
        compared += 1
        if recorded is _MISSING:
            found.append(f"summary.json: {path} is missing (the rows give {value!r})")
        elif not _same(value, recorded):
            found.append(f"summary.json: {path} is {recorded!r}; the rows give {value!r}")
    line = headline(_merged(written, again))
    compared += 1
    if summary.headline != line:
        found.append(f"summary.json: headline is {summary.headline!r}; the rows give {line!r}")
    return found, compared
