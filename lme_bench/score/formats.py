"""Which benchmark's format an answers file is in, read as that format: a JSON document of
LoCoMo predictions or of one BEAM chat's answers, else one JSON object a line: LongMemEval's
retrieval log where its first line holds `retrieval_results`, else its hypotheses.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.score.answers import (
    HYPOTHESES,
    AnswersFile,
    ScoreInputError,
    read_hypotheses,
    read_text,
)
from lme_bench.score.beam_answers import BEAM, is_beam, read_beam
from lme_bench.score.locomo_answers import LOCOMO, is_locomo, read_locomo
from lme_bench.score.rankings import RANKINGS, is_rankings, read_rankings

BENCHMARK_OF = {
    HYPOTHESES: "longmemeval",
    LOCOMO: "locomo",
    RANKINGS: "longmemeval",
    BEAM: "beam",
}
WORDS = {
    BEAM: "BEAM answers",
    HYPOTHESES: "a LongMemEval hypotheses file",
    LOCOMO: "LoCoMo predictions",
    RANKINGS: "a LongMemEval retrieval log",
}


def _first_line(text: str) -> object:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return json.loads(first)
    except json.JSONDecodeError:
        return None


def read_answers(path: Path) -> AnswersFile:
    path = Path(path).expanduser()
    text = read_text(path)
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None  # several lines of JSON, or not JSON: read line by line
    if is_locomo(whole):
        return read_locomo(path, whole)
    if is_beam(whole):
        assert isinstance(whole, dict)
        return read_beam(path, whole)
    if isinstance(whole, list):
        raise ScoreInputError(
            f"{path}: line 1: a JSON array that is neither a hypotheses.jsonl (one JSON object a"
            " line) nor LoCoMo predictions (conversations with a qa list)"
        )
    if is_rankings(whole) or is_rankings(_first_line(text)):
        return read_rankings(path, text)
    return read_hypotheses(path, text)
