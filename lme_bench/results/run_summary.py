"""summary.json as typed records: a finished run's (`RunSummary`) and a stopped run's
(`StoppedSummary`), written and read through them.

The file keeps its shape: the keys in the order the run adds them, each optional part absent
(not null) when the run has none, numbers as the run computed them (an int stays an int).
Parts whose shape belongs to a stage or a benchmark stay JSON objects: the retrieval figures
per granularity, the ingestion totals, QA, cost, and each benchmark's own section, held under
the benchmark's name (a plug-in's too) between `incomplete` and `headline`.

Reading a file that is not a summary of this version names the file and the first field that
is missing or of the wrong kind (`SummaryError`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from lme_bench.results.atomic import write_text_atomically

Section = dict[str, Any]  # a JSON object whose shape belongs to a stage or a benchmark


class SummaryError(ValueError):
    """A summary.json that cannot be read: the file and the field are in the message."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetRecord(_Record):
    path: str
    sha256: str


class RunRecord(_Record):
    dataset: DatasetRecord
    wall_seconds: int | float


class Incomplete(_Record):
    failed: int
    question_ids: list[str]


class BaselineRecord(BaseModel):
    """The run against its baseline (lme_bench.run.baseline); the comparison's figures,
    when it was made, follow the fields named here."""

    model_config = ConfigDict(extra="allow")

    compare_to: str
    series: str
    run_id: str | None
    status: str
    message: str


_LEADING = (  # the fields before the benchmarks' sections, in the file's order
    "note",
    "averaging",
    "session",
    "turn",
    "benchmark",
    "benchmark_source",
    "ingestion",
    "memory_health",
    "memory",
    "search_latency",
    "qa",
    "memory_system",
    "cost",
    "estimate",
    "run",
    "incomplete",
)
_TRAILING = ("headline", "baseline")


class RunSummary(BaseModel):
    """A finished run's summary.json. Any key not declared here is a benchmark's section."""

    model_config = ConfigDict(extra="allow")

    note: str
    averaging: dict[str, str]
    session: Section
    turn: Section
    benchmark: str
    benchmark_source: str | None = None  # `[dataset] benchmark` when a path: "where:Class"
    ingestion: Section
    memory_health: Section
    memory: Section
    search_latency: Section | None  # None: no search ran (answers scored by `lme-bench score`)
    qa: Section | None = None
    memory_system: Section | None = None
    cost: Section | None  # None: the run called no priced model
    estimate: Section | None = None
    run: RunRecord
    incomplete: Incomplete
    headline: str
    baseline: BaselineRecord | None = None

    @model_validator(mode="after")
    def _sections_are_objects(self) -> RunSummary:
        for name, value in (self.model_extra or {}).items():
            if not isinstance(value, dict):
                raise ValueError(f"{name}: a benchmark's section is a JSON object")
        return self

    @model_serializer(mode="wrap")
    def _in_file_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        sections = [k for k in dumped if k not in _LEADING and k not in _TRAILING]
        order = [*_LEADING, *sections, *_TRAILING]
        return {k: dumped[k] for k in order if k in dumped}

    def section(self, name: str) -> Section | None:
        """The benchmark `name`'s own section, when the run has one."""
        found = (self.model_extra or {}).get(name)
        return found if isinstance(found, dict) else None

    def sections(self) -> dict[str, Section]:
        """Every benchmark section, by benchmark name."""
        return {k: v for k, v in (self.model_extra or {}).items() if isinstance(v, dict)}


class StoppedRecord(_Record):
    signal: str
    run_id: str
    memories: int
    resume: str


class StoppedSummary(_Record):
    """A stopped run's summary.json (lme_bench.run.stopped)."""

    stopped: StoppedRecord
    ingestion: Section
    memory_system: Section
    answers_and_verdicts: Section
    cost: Section


def summary_text(summary: RunSummary | StoppedSummary) -> str:
    """The file's text: the fields the summary was given, in the file's order."""
    return json.dumps(summary.model_dump(exclude_unset=True), indent=2) + "\n"


def write_summary_json(path: Path, summary: RunSummary | StoppedSummary) -> None:
    write_text_atomically(path, summary_text(summary))


def _problem(path: Path | str, error: ValidationError) -> SummaryError:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(the whole file)"
    kind = "is missing" if first["type"] == "missing" else f"is not valid: {first['msg']}"
    return SummaryError(
        f"{path}: field {field} {kind} (not a summary.json of this lme-bench version)"
    )


def parse_summary(data: Any, path: Path | str = "summary.json") -> RunSummary | StoppedSummary:
    """The summary `data` (parsed JSON) holds; SummaryError naming `path` and the field."""
    if not isinstance(data, dict):
        raise SummaryError(f"{path}: does not hold a JSON object")
    model: type[RunSummary | StoppedSummary] = StoppedSummary if "stopped" in data else RunSummary
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _problem(path, exc) from None


def _loaded(data: bytes | str, path: Path | str) -> Any:
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise SummaryError(f"{path}: cannot be read ({exc})") from exc
    except ValueError as exc:
        raise SummaryError(f"{path}: is not JSON ({exc})") from exc


def _finished(found: RunSummary | StoppedSummary, path: Path | str) -> RunSummary:
    if isinstance(found, StoppedSummary):
        raise SummaryError(f"{path}: the run was stopped; its resumed run writes the summary")
    return found


def read_summary(path: Path) -> RunSummary | StoppedSummary:
    """The summary.json at `path`; SummaryError when it cannot be read or is not one."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SummaryError(f"{path}: cannot be read ({exc})") from exc
    return parse_summary(_loaded(data, path), path)


def read_run_summary(path: Path) -> RunSummary:
    """The summary.json of a finished run; SummaryError for a stopped run's or a bad file."""
    return _finished(read_summary(path), path)


def parse_summary_bytes(data: bytes, path: Path | str = "summary.json") -> RunSummary:
    """A finished run's summary.json from its bytes (a bundle's member `path`)."""
    return _finished(parse_summary(_loaded(data, path), path), path)
