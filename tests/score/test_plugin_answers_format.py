"""A benchmark's own answers format (`answers_formats`, lme_bench.benchmarks.answers) is read
by `lme-bench score` as the built-ins' are: recognised before the fallback format, its answers
attributed to its benchmark."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lme_bench.benchmarks.answers import ScoreInputError
from lme_bench.score.formats import format_named, read_answers

PLUGIN = """
import json
from lme_bench.benchmarks.answers import Answer, AnswersFile, AnswersFormat, ScoreInputError


def _read(path, text, whole):
    answers = []
    for number, (qid, picked) in enumerate(whole["picks"].items(), start=1):
        if picked not in "ABCD":
            raise ScoreInputError(f"{path}: picks.{qid}: expected a letter, got {picked!r}")
        answers.append(Answer(qid, picked, f"picks.{qid}"))
    return AnswersFile(path, "letters", "0" * 64, answers)


LETTERS = AnswersFormat(
    name="letters",
    words="letter picks",
    recognises=lambda whole, first: isinstance(whole, dict) and "picks" in whole,
    read=_read,
)


class Letters:
    name = "letters"
    scoring = None
    answers_formats = (LETTERS,)

    def detect(self, path): return False
    def validate(self, path): pass
    def builds(self, path): return iter(())
    def questions(self, path): return iter(())
"""


def _plugin(tmp_path: Path) -> str:
    path = tmp_path / "letters.py"
    path.write_text(textwrap.dedent(PLUGIN))
    return f"{path}:Letters"


def test_a_plugin_format_is_recognised_before_the_fallback_and_names_its_benchmark(
    tmp_path: Path,
) -> None:
    configured = _plugin(tmp_path)
    file = tmp_path / "picks.json"
    file.write_text(json.dumps({"picks": {"q1": "B", "q2": "C"}}))
    answers = read_answers(file, configured)
    assert answers.format == "letters"
    assert [(a.question_id, a.hypothesis) for a in answers.answers] == [("q1", "B"), ("q2", "C")]
    assert format_named("letters", configured).benchmark == "letters"
    # Without the plug-in named, the same one-line JSON object is the fallback's (hypotheses).
    with pytest.raises(ScoreInputError, match="line 1: field question_id is missing"):
        read_answers(file)


def test_a_plugin_formats_bad_input_is_its_own_error(tmp_path: Path) -> None:
    configured = _plugin(tmp_path)
    file = tmp_path / "picks.json"
    file.write_text(json.dumps({"picks": {"q1": "Z"}}))
    with pytest.raises(ScoreInputError, match=r"picks\.q1: expected a letter, got 'Z'"):
        read_answers(file, configured)
