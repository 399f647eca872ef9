"""An answers file checked against the dataset it is scored on: the file's benchmark is the
dataset's, every answered question is one of the dataset's, and a dataset the file's folder
names (an lme-bench run's manifest.json beside it) is this one. Which questions of the dataset
have no answer is kept, to be counted and listed, never scored as wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lme_bench.benchmarks.answers import Answer, AnswersFile, ScoreInputError
from lme_bench.dataset.shards import PreparedDataset, QuestionRef
from lme_bench.score.formats import format_named

MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class Matched:
    """The answered questions (in the dataset's order) with their answers, and the dataset's
    questions the file does not answer."""

    refs: list[QuestionRef]
    answers: dict[str, Answer]
    missing: list[str]


def _named_sha256(answers: AnswersFile) -> tuple[Path, str] | None:
    """The dataset sha256 an lme-bench manifest beside the file names, if there is one."""
    manifest = answers.path.parent / MANIFEST
    if not manifest.is_file():
        return None
    try:
        found = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # not a manifest of ours: it names nothing
    dataset = found.get("dataset") if isinstance(found, dict) else None
    sha256 = dataset.get("sha256") if isinstance(dataset, dict) else None
    return (manifest, sha256) if isinstance(sha256, str) and sha256 else None


def _same_question(path: Path, answer: Answer, ref: QuestionRef) -> None:
    """Where the file repeats the question, it is the dataset's (else the file answers another
    version of the dataset)."""
    if answer.question is None:
        return
    asked = ref.load().question
    if answer.question.strip() != asked.strip():
        raise ScoreInputError(
            f"{path}: {answer.place}: field question: {answer.question!r} is not the dataset's"
            f" question {ref.question_id} ({asked!r})"
        )


def check_dataset(answers: AnswersFile, prepared: PreparedDataset) -> None:
    """A manifest beside the answers naming another dataset is an error naming both."""
    named = _named_sha256(answers)
    if named is not None and named[1] != prepared.sha256:
        manifest, sha256 = named
        raise ScoreInputError(
            f"{manifest}: field dataset.sha256: the answers in {answers.path.name} were made on"
            f" a dataset with sha256 {sha256}; {prepared.path} has sha256 {prepared.sha256}"
        )


def match_answers(
    answers: AnswersFile, prepared: PreparedDataset, configured: str | None = None
) -> Matched:
    """The answered questions; an answer to no question of the dataset, or a file of another
    benchmark than the dataset's, is an error naming the file, its line and the field."""
    check_dataset(answers, prepared)
    benchmarks = sorted({r.benchmark for r in prepared.questions})
    known = format_named(answers.format, configured)
    if benchmarks and benchmarks != [known.benchmark]:
        raise ScoreInputError(
            f"{answers.path}: {known.format.words} ({known.benchmark}), but {prepared.path} is"
            f" a {', '.join(benchmarks)} dataset: score it against its own benchmark's dataset"
        )
    if known.format.name_questions is not None:  # not named by id (BEAM's: ability, place)
        answers = known.format.name_questions(answers, prepared.questions, str(prepared.path))
    by_id = {a.question_id: a for a in answers.answers}
    ids = {r.question_id for r in prepared.questions}
    unknown = [a for a in answers.answers if a.question_id not in ids]
    if unknown:
        first = unknown[0]
        more = f" (and {len(unknown) - 1} more unknown ids)" if len(unknown) > 1 else ""
        raise ScoreInputError(
            f"{answers.path}: {first.place}: field question_id: {first.question_id!r} is no"
            f" question of {prepared.path}{more}"
        )
    refs = [r for r in prepared.questions if r.question_id in by_id]
    for ref in refs:
        _same_question(answers.path, by_id[ref.question_id], ref)
    missing = [r.question_id for r in prepared.questions if r.question_id not in by_id]
    return Matched(refs, by_id, missing)
