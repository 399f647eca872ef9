"""A comparison of two runs as data: the paired QA figures, the paired retrieval metrics, a
benchmark's own official figures paired (its report hooks), and the budgets and memory systems
of both runs (lme_bench.report renders it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lme_bench.compare.load import JudgeLabels
from lme_bench.compare.official import OfficialPart
from lme_bench.compare.paired import MetricComparison, QaComparison


@dataclass(frozen=True, slots=True)
class QaPart:
    labels_a: JudgeLabels
    labels_b: JudgeLabels
    judging_matches: bool
    scores: QaComparison


@dataclass(frozen=True, slots=True)
class RetrievalComparison:
    granularity: str  # session | turn
    official: list[MetricComparison]  # the official printer's average: every non-`_abs` question
    user_evidence: list[MetricComparison]  # run_retrieval.py's: also with user-turn evidence


@dataclass(frozen=True, slots=True)
class Comparison:
    run_a: str
    run_b: str
    qa: QaPart | None  # None: not both runs were judged
    retrieval: list[RetrievalComparison]  # empty: not both runs have retrieval.parquet
    resamples: int
    seed: int
    unequal_budgets: list[str] = field(default_factory=list)
    memories: tuple[dict[str, Any], dict[str, Any]] = ({}, {})  # each run's memory system
    benchmark: str | None = None  # one with a compare hook, or other; None: unknown
    official: OfficialPart | None = None  # the benchmark's own figures, paired (its hook)
    different_datasets: str | None = None  # the note when the runs read different files
    benchmark_source: str | None = None  # `[dataset] benchmark` of a benchmark given by path
