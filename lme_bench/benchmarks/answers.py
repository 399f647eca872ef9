"""Answers files another harness wrote, as a benchmark reads them for `lme-bench score`.

A benchmark class may name the formats of its answers files as `answers_formats`: a sequence
of `AnswersFormat` (or `"module:attribute"` naming one). `lme-bench score` tries every known
benchmark's formats on a file, takes the first that recognises it, and scores it against a
dataset of that benchmark. Bad input is one ScoreInputError naming the file, the line (or the
place in the document) and the field.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ScoreInputError(ValueError):
    """An answers file (or the dataset it is scored against) that cannot be scored; names the
    file, the line and the field."""


@dataclass(frozen=True, slots=True)
class Answer:
    question_id: str
    hypothesis: str
    place: str  # where the file holds it, for errors: "line 12", "conv-26 qa[3]"
    question: str | None = None  # the question's text where the file repeats it
    ranked: tuple[str, ...] | None = None  # a ranking of the history: its official ids


@dataclass(frozen=True, slots=True)
class AnswersFile:
    path: Path
    format: str  # the AnswersFormat's name
    sha256: str
    answers: list[Answer]


@dataclass(frozen=True, slots=True)
class AnswersFormat:
    """One format of a benchmark's answers files."""

    name: str
    """Stable, recorded in summary.json (`answers.format`): `"locomo-predictions"`."""
    words: str
    """The format as people call it, for errors: `"LoCoMo predictions"`."""
    recognises: Callable[[Any, Any], bool]
    """(the file parsed as one JSON document, else None; its first non-empty line parsed, else
    None) -> whether the file is in this format. Cheap; never raises."""
    read: Callable[[Path, str, Any], AnswersFile]
    """(path, the file's text, the document parsed as in `recognises`) -> every answer; bad
    input raises ScoreInputError."""
    name_questions: Callable[[AnswersFile, Sequence[Any], str], AnswersFile] | None = None
    """For a format whose answers are not named by question id (BEAM's, by ability and place):
    (answers, the dataset's QuestionRefs, the dataset's path) -> the answers named by the ids.
    None: the file names them."""
    ranking_rows: Callable[[Path, Any, Answer], Sequence[Any]] | None = None
    """For a file of rankings rather than answers (LongMemEval's retrieval log): (path, the
    question's QuestionRef, its answer) -> its retrieval rows, scored by the retrieval
    metrics instead of a judge. None: answers, judged."""
    fallback: bool = False
    """Tried after every other format (a JSON-lines format that takes what others do not)."""
    run_file: str | None = None
    """The file in this format a run of the benchmark writes its answers to (what `verify
    --rejudge` judges again from a bundle): its name in the run folder, or a pattern
    (`fnmatch`, where `*` spans folders too) for a run writing a file per part (BEAM's per
    chat). None: a run writes none."""


def run_files(answers: AnswersFormat, names: Iterable[str]) -> list[str]:
    """Of a run folder's file names (or a bundle's members), those a run wrote in this
    format, sorted."""
    pattern = answers.run_file
    if pattern is None:
        return []
    return sorted(n for n in names if n == pattern or fnmatch.fnmatchcase(n, pattern))


def text_field(item: dict[str, Any], name: str, place: str) -> str:
    """`item[name]` as text; a missing or non-text field is one error naming place and field."""
    if name not in item:
        raise ScoreInputError(f"{place}: field {name} is missing")
    value = item[name]
    if not isinstance(value, str):
        raise ScoreInputError(f"{place}: field {name}: expected text, got {value!r}")
    return value
