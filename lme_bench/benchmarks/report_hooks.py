"""The optional report hooks of a benchmark: its section of summary.md's headline and of
report.html, the words of summary.md's QA part, its section of `lme-bench compare`, its
figure in a series' history and its headline on a leaderboard.

A benchmark class (lme_bench.benchmarks.protocol) may name a `ReportHooks` as its attribute
`report_hooks`: the object, or `"module:attribute"` naming one. The report and compare code
reads them through `report_hooks_of`, never by the benchmark's name; a benchmark without them
has no section of its own (the run's accuracy and retrieval figures only). Every field has a
default meaning "none". A function a field holds may be given as `"module:function"`, imported
when first called: the built-ins' sections live beside their benchmark in
lme_bench.builtin_benchmarks, a layer above report and compare.

The benchmark's figures are summary.json's section under its name (the run's scoring hooks,
lme_bench.benchmarks.scoring_hooks, write it); each hook below reads that section.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.registry import BenchmarkError, benchmark_class, known_names
from lme_bench.benchmarks.scoring_hooks import DEFAULT_BENCHMARK as DEFAULT_BENCHMARK
from lme_bench.plugins import import_module_or_file

Section = Mapping[str, Any]
"""A benchmark's section of summary.json (its figures under its name)."""


@dataclass(frozen=True, slots=True)
class ReportTable:
    """A benchmark's section of report.html: a title, a paragraph of plain text, a table (no
    table without rows)."""

    title: str
    words: str
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True, slots=True)
class QaWords:
    """What summary.md's question-answering part says of the benchmark's verdicts."""

    rule: str | None = None
    """The rule its verdicts are read by, when an official one (LongMemEval's scripts); such a
    run states it even without verdicts. None: lme-bench's own rule, stated only with verdicts."""
    averages: str | None = None
    """The note on the averages (the intervals note follows). None: the generic note."""
    abstaining: str = "questions whose answer is not in the history count in their type"
    """How questions without their answer in the history count, in the generic averages note."""
    types: tuple[str, ...] = ()
    """Its question types, when verdicts are reported per type: "of N types" counts them."""
    types_note: str | None = None
    """Said once when the verdicts are of these types (the figure is not the official one)."""


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """What a comparison's official part is computed from (lme_bench.compare)."""

    benchmark: str  # the benchmark both runs are of, the part's name
    results_dir: Path
    run_a: str
    run_b: str
    judge: str | None
    allow_different_judges: bool
    resamples: int
    seed: int


@dataclass(frozen=True, slots=True)
class CompareWords:
    """The words of the comparison's official table and chart."""

    title: str
    note: str
    """Formatted with `resamples`, `seed` and `judge`."""
    y_label: str
    first_column: str


@dataclass(frozen=True, slots=True)
class HistoryKind:
    """The benchmark's headline figure in a series' history (a column and a trend chart)."""

    key: str
    title: str
    judged: bool  # a figure a judge makes: another judge breaks its line
    percent: bool  # shown as a percentage, else to three decimals


@dataclass(frozen=True, slots=True)
class HistoryFigure:
    """One run's value of that figure, 0-1; `samples`: the per-question values the history's
    interval is bootstrapped over (None: no interval)."""

    value: float
    n: int
    per_type: dict[str, float | None]
    samples: list[float] | None = None


@dataclass(frozen=True, slots=True)
class BoardFigure:
    """A figure of a leaderboard row: its name, its value (0-1) and interval where there is one."""

    label: str
    value: float | None
    ci95: tuple[float, float] | None = None
    n: int | None = None


@dataclass(frozen=True, slots=True)
class BoardHeadline:
    """A bundle's leaderboard headline for a benchmark whose figures are not summary.json's `qa`:
    the judge that made them, its prompt version and digests (bundles whose judges read other
    prompts never share a table), the headline figure and a second one where natural."""

    judge: str
    prompt_version: str
    prompt_digests: tuple[str, ...]
    headline: BoardFigure
    second: BoardFigure | None = None


@dataclass(frozen=True, slots=True)
class ReportHooks:
    """A benchmark's report hooks; each left None (or empty) is no section of its own."""

    headline: Callable[[Section], list[str]] | str | None = None
    """The parts its figures lead the run's one-line headline with."""
    verdicts_caveat: str | None = None
    """When the section is present: an LLM judge's accuracy is not the official metric, said
    so in the headline (`…; <caveat>)`)."""
    verdicts_label: str | None = None
    """When the section is present: the label of the verdict accuracy in report.html's chart and
    in the comparison."""
    html_section: Callable[[Section], ReportTable] | str | None = None
    """Its section of report.html."""
    qa_words: QaWords = QaWords()
    compare: Callable[[CompareRequest], Any] | str | None = None
    """Its official figures of two runs paired per question (an lme_bench.compare.official
    OfficialPart); the runs compare as its runs when both summaries hold its section."""
    compare_words: CompareWords | None = None
    replaces_qa: str | None = None
    """Its official figures stand for QA in a comparison (no verdicts to pair): the line that
    says why QA accuracy is not compared."""
    history_kind: HistoryKind | None = None
    history: Callable[[Section, Path], HistoryFigure | None] | str | None = None
    """Its figure from a run's section and folder (None: the run has none)."""
    leaderboard: Callable[[Section, Mapping[str, Any]], BoardHeadline | None] | str | None = None
    """Its leaderboard headline from a bundle's section and its BUNDLE.json (None: the bundle
    has none); used when summary.json's `qa` holds no judge."""

    def call(self, hook: str, *args: Any) -> Any:
        """Call the hook named `hook` (a function or `"module:function"`)."""
        found = getattr(self, hook)
        return (_resolve(found) if isinstance(found, str) else found)(*args)


NO_HOOKS = ReportHooks()


def _attribute(target: str) -> Any:
    """What `"module:attribute"` names (a module's or a file's)."""
    module_name, _, attribute = target.rpartition(":")
    return getattr(import_module_or_file(module_name, prefix="lme_bench_benchmark_"), attribute)


@functools.cache
def _resolve(target: str) -> Callable[..., Any]:
    found = _attribute(target)
    if not callable(found):
        raise BenchmarkError(f"{target} is not a function")
    return found  # type: ignore[no-any-return]


def _class_of(name: str, source: str | None) -> type[Any] | None:
    """The benchmark class of the run: the one `source` (`[dataset] benchmark`, "module:Class"
    or "path/file.py:Class") loads when its name is `name`, else the one `name` is registered
    as; None when neither loads (a plug-in not installed here, a file gone)."""
    for where in (source, name) if source and source != name else (name,):
        try:
            cls = benchmark_class(where)
        except BenchmarkError:
            continue
        if where == name or getattr(cls, "name", None) == name:
            return cls
    return None


@functools.cache
def report_hooks_of(name: str, source: str | None = None) -> ReportHooks:
    """The report hooks of the benchmark `name` (a run's recorded benchmark; `source`: its
    recorded `[dataset] benchmark` when given by path, summary.json's `benchmark_source`);
    none for a name that loads no benchmark (a plug-in not installed here)."""
    cls = _class_of(name, source)
    found = getattr(cls, "report_hooks", None) if cls is not None else None
    if isinstance(found, str):
        found = _attribute(found)
    if found is None:
        return NO_HOOKS
    if not isinstance(found, ReportHooks):
        raise BenchmarkError(f"benchmark {name!r}: report_hooks is not a ReportHooks")
    return found


def with_hooks() -> list[tuple[str, ReportHooks]]:
    """The known benchmarks (built-ins first, then the registered ones) that have report hooks."""
    found = [(name, report_hooks_of(name)) for name in known_names()]
    return [(name, hooks) for name, hooks in found if hooks != NO_HOOKS]
