"""The benchmark protocol: what lme-bench needs from a benchmark's files.

A benchmark is one class with a name, a scoring descriptor and four methods over a path (a
file or a folder the user names): `detect`, `validate`, `builds` and `questions`. No base class
is needed. Built-in benchmarks (LongMemEval, LoCoMo, BEAM) are found exactly as outside ones
are (lme_bench.benchmarks.registry): by name, by a name registered under the
`lme_bench.benchmarks` entry-point group, by `package.module:Class` or by
`path/to/file.py:Class`. The class is built with no arguments.

Two kinds of record come out of a benchmark's files:

- A `Build`: one history to be ingested once into one memory (a LongMemEval question's
  haystack, a LoCoMo or BEAM conversation), as dated sessions of turns in date order, keyed
  by opaque session keys. Its `content_digest` names its content.
- A `Question` with its `Gold`: the question asked of one build, and apart from it the labels
  only the scorer reads. What a memory system or a reader model sees of a question is
  `Question.public()`: its text and date, nothing else.

Gold labels (answers, evidence ids, categories, adversarial answers, question ids, the
dataset's own session ids) never reach a memory system, the memory agent or a reader model:
build ids and question ids are the harness's own bookkeeping (memories get opaque titles made
from them), and sessions carry opaque keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from lme_bench.dataset.errors import DatasetError


class BenchmarkDataError(DatasetError):
    """Bad benchmark input at one place: `file: item: field F: problem` (the parts known).
    `item` names the record the way the benchmark does (`question #3 (question_id 'x')`,
    `sample 'conv-26'`, `chat 100K-1`)."""

    def __init__(
        self, path: Path | str, problem: str, *, item: str | None = None, field: str | None = None
    ) -> None:
        place = [str(path), *([item] if item else []), *([f"field {field}"] if field else [])]
        ValueError.__init__(self, f"{': '.join(place)}: {problem}")
        self.path, self.problem, self.field = str(path), problem, field
        self.index, self.question_id = None, None
        self.item = item


@dataclass(frozen=True, slots=True)
class BuildTurn:
    """One turn of a session, in the memory side's vocabulary (lme_bench.backends.protocol)."""

    index: int
    """Position in its session, from 0."""
    role: str
    """`"user"` or `"assistant"`. A conversation between two people (LoCoMo) has no such
    split: both speakers' turns are `"user"` turns, told apart by `speaker`."""
    content: str
    """The text a memory is given; for two named speakers it starts with the speaker's name
    (`"Ada: I adopted a dog."`), so the name survives any memory system."""
    speaker: str | None = None
    """The speaker's name where the benchmark has named speakers; else None."""


@dataclass(frozen=True, slots=True)
class BuildSession:
    """One session of a build, as a memory ingests it."""

    key: str
    """Opaque and unique within the build: its rank in date order (`"s000"`, `"s001"`, …),
    never the dataset's own session id."""
    date: str
    """The session's date as the benchmark writes it (`"2023/05/20 (Sat) 02:21"`,
    `"1:56 pm on 8 May, 2023"`, `"2024-03-15"`)."""
    turns: tuple[BuildTurn, ...]
    """The session's turns in order."""


def session_key(rank: int) -> str:
    """The opaque key of the session at `rank` in date order (`s000`, `s001`, …)."""
    return f"s{rank:03d}"


def content_digest(sessions: Sequence[BuildSession]) -> str:
    """sha256 of the sessions' content (keys, dates, every turn's index, role, speaker and
    text) as canonical JSON: equal histories have equal digests, any change changes it."""
    rows = [
        [s.key, s.date, [[t.index, t.role, t.speaker, t.content] for t in s.turns]]
        for s in sessions
    ]
    canonical = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Build:
    """One history to ingest once into one memory, asked by every question naming it."""

    build_id: str
    """Stable across reads of the same file; unique within it. Harness-side only: memories
    get opaque titles made from it. Never made from a question id or a gold label."""
    sessions: tuple[BuildSession, ...]
    """The sessions in date order (ties keep the file's order)."""

    @property
    def content_digest(self) -> str:
        """sha256 of the sessions' content (`content_digest`): part of the build's
        fingerprint, so a changed history is ingested anew."""
        return content_digest(self.sessions)

    @property
    def turn_count(self) -> int:
        """The turns of every session."""
        return sum(len(s.turns) for s in self.sessions)


@dataclass(frozen=True, slots=True)
class PublicQuestion:
    """A question as a memory system or a reader model sees it: nothing else."""

    question: str
    """The question's text."""
    question_date: str | None
    """The date the question is asked on, as the benchmark writes it; None when the
    benchmark gives none (LoCoMo, BEAM)."""


@dataclass(frozen=True, slots=True)
class Question:
    """A question asked of one build; the harness's record (ids and category stay here)."""

    question_id: str
    """Unique within the file, stable across reads; never shown to the system under test."""
    build_id: str
    """The `Build.build_id` of the history it asks about."""
    category: str
    """The question type for reporting (`"temporal-reasoning"`, `"multi-hop"`, …)."""
    question: str
    """The question's text, as the benchmark writes it."""
    question_date: str | None = None
    """The date it is asked on, as the benchmark writes it; None when the benchmark gives
    none (a run then asks it on its build's last session date)."""

    def public(self) -> PublicQuestion:
        """All a memory system or reader model may see of the question."""
        return PublicQuestion(question=self.question, question_date=self.question_date)


@dataclass(frozen=True, slots=True)
class Gold:
    """The labels of one question, for the scorer only."""

    question_id: str
    """The `Question.question_id` they belong to."""
    answers: tuple[str, ...]
    """Reference answers (or a rubric's text); empty when the benchmark has none."""
    evidence_sessions: tuple[str, ...] = ()
    """Keys (`BuildSession.key`) of the sessions holding the evidence, where known."""
    evidence_turns: tuple[str, ...] = ()
    """Evidence turns as `"<session key>:<turn index>"`, where known."""
    evidence_ids: tuple[str, ...] = ()
    """The evidence as the benchmark's own files name it (LongMemEval session ids, LoCoMo
    dialog ids, BEAM message ids), for official exports."""
    abstention: bool = False
    """The answer is not in the history: a right answer says so."""
    adversarial: bool = False
    """The question was written to tempt a wrong answer (LoCoMo category 5)."""
    native: Any = field(default=None, compare=False)
    """The benchmark's own gold record, for its official scorer (None if it needs none)."""


@dataclass(frozen=True, slots=True)
class Scoring:
    """How a benchmark is scored: names only; the functions live in the benchmark's package."""

    official_scorers: tuple[str, ...]
    """The official scripts or functions the figures follow (`"src/evaluation/evaluate_qa.py"`)."""
    headline: tuple[str, ...]
    """The figures reported first, in order (`"overall accuracy"`, `"task-averaged accuracy"`)."""
    module: str
    """The lme-bench module holding the scoring functions."""


@runtime_checkable
class Benchmark(Protocol):
    """The contract: a class with these attributes and methods (no base class is needed).
    Each method takes the path the user named (`[dataset] path`). Optional beside them: the
    scoring hooks (lme_bench.benchmarks.scoring_hooks), `report_hooks`
    (lme_bench.benchmarks.report_hooks), `parse_session_date(text) -> datetime` for dates
    in a form of its own (tried after LongMemEval's form, before ISO 8601), and
    `longmemeval_format = True` for files LongMemEval's own loader reads whole."""

    name: ClassVar[str]
    """A short, stable name (`"locomo"`): `[dataset] benchmark` and reports use it."""
    scoring: ClassVar[Scoring]
    """Its official scorers and headline figures."""

    def detect(self, path: Path) -> bool:
        """True when `path` looks like this benchmark's file or folder. Cheap (a glance at the
        first bytes or the folder's names, not a parse) and never raises."""
        ...

    def validate(self, path: Path) -> None:
        """Read everything once; raise one `DatasetError` (e.g. `BenchmarkDataError`) naming
        the file, the item and the field of the first problem."""
        ...

    def builds(self, path: Path) -> Iterator[Build]:
        """Each history once, in file order, streamed (a large file is never held whole);
        bad input raises as `validate` does."""
        ...

    def questions(self, path: Path) -> Iterator[tuple[Question, Gold]]:
        """Each question with its gold labels, in file order, streamed; every
        `Question.build_id` is one `builds` yields."""
        ...
