"""LongMemEval retrieval rankings in the official retrieval log's format (what
`src/retrieval/run_retrieval.py` writes: one JSON object a line, the question's fields and
`retrieval_results.ranked_items`, each with its `corpus_id`), scored with the official
retrieval metrics (lme_bench.metrics.ranking_metrics), into the rows the retrieval stage
writes. A log of turns is scored at turn level and, by the official procedure, at session
level; a log of sessions at session level (its turn rows are not applicable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import Answer, AnswersFile, AnswersFormat, ScoreInputError
from lme_bench.common.json_lines import json_object_lines
from lme_bench.dataset.models import Instance
from lme_bench.dataset.shards import QuestionRef, file_sha256
from lme_bench.metrics.ranking_metrics import (
    is_evidence,
    official_turn_id,
    score_ranking,
    score_turn_ranking_at_session_level,
)
from lme_bench.retrieval.official_ids import RetrievalRow, corpus_session_ids, corpus_turn_ids

RANKINGS = "longmemeval-retrieval-log"
FIELD = "retrieval_results.ranked_items"
SESSION_LOG = "the log ranks sessions (run_retrieval.py --granularity session): no turn ranking"


def is_rankings(first: Any) -> bool:
    return isinstance(first, dict) and "retrieval_results" in first


def _ranked(item: dict[str, Any], place: str) -> tuple[str, ...]:
    results = item.get("retrieval_results")
    ranked = results.get("ranked_items") if isinstance(results, dict) else None
    if not isinstance(ranked, list):
        raise ScoreInputError(f"{place}: field {FIELD}: expected a list of ranked items")
    ids = []
    for index, entry in enumerate(ranked):
        corpus_id = entry.get("corpus_id") if isinstance(entry, dict) else None
        if not isinstance(corpus_id, str) or not corpus_id:
            raise ScoreInputError(
                f"{place}: field {FIELD}[{index}].corpus_id: expected text, got {corpus_id!r}"
            )
        ids.append(corpus_id)
    return tuple(ids)


def read_rankings(path: Path, text: str, whole: Any = None) -> AnswersFile:
    """Every line's ranking; a question id twice is an error naming both lines."""
    answers: list[Answer] = []
    seen: dict[str, int] = {}
    for number, place, item in json_object_lines(path, text, ScoreInputError):
        question_id = item.get("question_id")
        if not isinstance(question_id, str) or not question_id:
            raise ScoreInputError(f"{place}: field question_id: expected text, got {question_id!r}")
        if question_id in seen:
            raise ScoreInputError(
                f"{place}: field question_id: {question_id!r} already on line {seen[question_id]}"
            )
        seen[question_id] = number
        answers.append(Answer(question_id, "", f"line {number}", ranked=_ranked(item, place)))
    if not answers:
        raise ScoreInputError(f"{path}: the rankings file holds no rankings")
    return AnswersFile(path, RANKINGS, file_sha256(path), answers)


def _session_of(instance: Instance) -> dict[str, str]:
    """Each official turn id's official session id."""
    found: dict[str, str] = {}
    sessions = corpus_session_ids(instance)
    for sid, turns, session in zip(
        instance.haystack_session_ids, instance.haystack_sessions, sessions, strict=True
    ):
        for number, turn in enumerate(turns, start=1):
            if turn.role == "user":
                found[official_turn_id(sid, number, turn.role, bool(turn.has_answer))] = session
    return found


def _row(ref: QuestionRef, granularity: str, ranked: list[str], **fields: Any) -> RetrievalRow:
    return RetrievalRow(ref.question_id, ref.question_type, ref.is_abstention, granularity,
                        ranked, **fields)  # fmt: skip


def ranking_rows(path: Path, ref: QuestionRef, answer: Answer) -> list[RetrievalRow]:
    """The session and turn rows of one question's ranking; an id in neither of its official
    corpora is an error naming the line and the item."""
    instance = ref.load()
    ranked = list(answer.ranked or ())
    turns, sessions = corpus_turn_ids(instance), corpus_session_ids(instance)
    n_turns, n_sessions = sum(map(is_evidence, turns)), sum(map(is_evidence, sessions))
    if set(ranked) <= set(turns):
        session_of = _session_of(instance)
        session_ranked = list(dict.fromkeys(session_of[t] for t in ranked))
        return [
            _row(ref, "session", session_ranked, n_evidence=n_sessions,
                 metrics=score_turn_ranking_at_session_level(ranked, turns)),
            _row(ref, "turn", ranked, n_evidence=n_turns, metrics=score_ranking(ranked, turns)),
        ]  # fmt: skip
    if set(ranked) <= set(sessions):
        return [
            _row(ref, "session", ranked, n_evidence=n_sessions,
                 metrics=score_ranking(ranked, sessions)),
            _row(ref, "turn", [], n_evidence=n_turns, status="not-applicable",
                 reason=SESSION_LOG),
        ]  # fmt: skip
    known = set(turns) | set(sessions)
    index = next(i for i, corpus_id in enumerate(ranked) if corpus_id not in known)
    raise ScoreInputError(
        f"{path}: {answer.place}: field {FIELD}[{index}].corpus_id: {ranked[index]!r} is in"
        f" neither the turn nor the session corpus of question {ref.question_id}, or the log"
        " mixes turns and sessions"
    )


RETRIEVAL_LOG = AnswersFormat(
    name=RANKINGS,
    words="a LongMemEval retrieval log",
    recognises=lambda whole, first: is_rankings(whole) or is_rankings(first),
    read=read_rankings,
    ranking_rows=ranking_rows,
)
