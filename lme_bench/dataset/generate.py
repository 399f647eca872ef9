"""Deterministic generator of LongMemEval-format files at S and M scale, for performance runs.

Each generated question copies one source question (cycled in order) with its question, answer,
dates and evidence sessions untouched, and pads its haystack with synthetic filler sessions of
plausible everyday chat (see filler_text.py), so that retrieval indexes and memory systems see
realistic volumes: S ≈ 48 sessions (38-62) and ≈ 500 turns per question, M ≈ 500 sessions per
question. The source is read and validated by `lme_bench.dataset.loader`.

The output is written as a stream (one question in memory at a time) to a temporary file in the
destination folder, then moved into place, and is byte-for-byte identical for the same source,
seed, scale and question count. Generated data is for measuring speed and memory use only: its
accuracy numbers mean nothing.

Generated question ids: ``<source id>_g<index>`` where index is the 0-based position in the output
(at least 4 digits), with the ``_abs`` suffix of abstention questions moved back to the end, e.g.
``3f9a21c7`` → ``3f9a21c7_g0000``, ``gpt4_2655b836_abs`` → ``gpt4_2655b836_g0001_abs``.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
import random
import re
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Final, Literal

from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.filler_text import filler_session
from lme_bench.dataset.loader import LoadedQuestion, iter_questions
from lme_bench.dataset.models import ABSTENTION_SUFFIX, Turn, parse_date

__all__ = ["DATE_FORMAT", "GenerationStats", "Scale", "default_source", "generate_dataset"]

Scale = Literal["s", "m"]
"""Haystack size: ``"s"`` like longmemeval_s (≈48 sessions), ``"m"`` like longmemeval_m (≈500)."""
Session = list[dict[str, Any]]

DATE_FORMAT: Final = "%Y/%m/%d (%a) %H:%M"
"""LongMemEval date format, e.g. ``2023/05/30 (Tue) 23:40`` (English weekday names)."""

_WEEKDAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_NUMBER_RE: Final = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_FILLER_SPAN_MINUTES: Final = 365 * 24 * 60
_MIN_GAP_MINUTES: Final = 30


@dataclass(frozen=True)
class GenerationStats:
    """What one `generate_dataset` call wrote."""

    questions: int
    sessions: int
    turns: int
    bytes: int
    seconds: float


@dataclass(frozen=True)
class _ScaleSpec:
    min_sessions: int
    max_sessions: int
    mode_sessions: float


# Sessions per question, evidence included (triangular distribution, like S's 38-62 with mean ≈48).
_SCALES: Final[dict[str, _ScaleSpec]] = {
    "s": _ScaleSpec(38, 62, 45.0),
    "m": _ScaleSpec(475, 525, 500.0),
}


# ---------------------------------------------------------------------------------------------
# Source questions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Evidence:
    when: datetime
    session_id: str
    date: str
    session: Session


@dataclass(frozen=True)
class _SourceQuestion:
    base_id: str
    abstention: bool
    question_type: str
    question: str
    answer: Any
    question_date: str
    question_when: datetime
    answer_session_ids: tuple[str, ...]
    evidence: tuple[_Evidence, ...]


def default_source() -> Traversable:
    """The bundled LongMemEval sample (may not exist in a partial checkout)."""
    return importlib.resources.files("lme_bench.dataset") / "sample" / "longmemeval_sample.json"


def _format_date(when: datetime) -> str:
    """`DATE_FORMAT` with English weekday names whatever the locale."""
    return (
        f"{when.year:04d}/{when.month:02d}/{when.day:02d} ({_WEEKDAYS[when.weekday()]}) "
        f"{when.hour:02d}:{when.minute:02d}"
    )


def _answer(loaded: LoadedQuestion) -> Any:
    """The answer with its JSON type: the loader turns numeric answers into text."""
    text = loaded.instance.answer
    if _NUMBER_RE.match(text):
        return json.loads(loaded.canonical_json)["answer"]
    return text


def _turn(turn: Turn) -> dict[str, Any]:
    """The turn as the source wrote it: ``has_answer`` only where the source had one."""
    out: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.has_answer is not None:
        out["has_answer"] = turn.has_answer
    return out


def _source_question(path: Path, loaded: LoadedQuestion) -> _SourceQuestion:
    q = loaded.instance
    wanted = set(q.answer_session_ids)
    missing = wanted.difference(q.haystack_session_ids)
    if missing:
        raise DatasetError(
            path,
            f"answer sessions not in the haystack: {sorted(missing)}",
            index=loaded.index,
            question_id=q.question_id,
            field="answer_session_ids",
        )
    evidence = tuple(
        _Evidence(parse_date(date), sid, date, [_turn(t) for t in session])
        for sid, date, session in zip(
            q.haystack_session_ids, q.haystack_dates, q.haystack_sessions, strict=True
        )
        if sid in wanted
    )
    return _SourceQuestion(
        base_id=q.question_id.removesuffix(ABSTENTION_SUFFIX),
        abstention=q.is_abstention,
        question_type=q.question_type,
        question=q.question,
        answer=_answer(loaded),
        question_date=q.question_date,
        question_when=parse_date(q.question_date),
        answer_session_ids=tuple(q.answer_session_ids),
        evidence=evidence,
    )


def _load_source(source: Path | Traversable) -> list[_SourceQuestion]:
    """Every source question, validated; raises DatasetError (a ValueError) for a bad file."""
    if not source.is_file():
        raise FileNotFoundError(f"LongMemEval source file not found: {source}")
    with importlib.resources.as_file(source) as path:
        return [_source_question(path, loaded) for loaded in iter_questions(path)]


# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------


def _filler_id(rng: random.Random, used: set[str]) -> str:
    while True:
        r = rng.random()
        if r < 0.45:
            sid = f"{rng.getrandbits(32):08x}_{rng.randint(1, 9)}"
        elif r < 0.8:
            sid = f"sharegpt_{''.join(rng.choices(_ALNUM, k=7))}_{rng.randint(0, 12)}"
        else:
            sid = f"ultrachat_{rng.randrange(1_000_000):06d}"
        if sid not in used and "answer" not in sid:
            used.add(sid)
            return sid


def _question_id(src: _SourceQuestion, index: int, width: int) -> str:
    return f"{src.base_id}_g{index:0{width}d}{ABSTENTION_SUFFIX if src.abstention else ''}"


def _build_question(
    src: _SourceQuestion, index: int, width: int, spec: _ScaleSpec, rng: random.Random
) -> tuple[dict[str, Any], int, int]:
    total = round(rng.triangular(spec.min_sessions, spec.max_sessions, spec.mode_sessions))
    n_fillers = max(0, total - len(src.evidence))

    used = {e.session_id for e in src.evidence}
    entries: list[tuple[datetime, str, str, Session]] = [
        (e.when, e.session_id, e.date, e.session) for e in src.evidence
    ]
    for _ in range(n_fillers):
        sid = _filler_id(rng, used)
        minutes_before = rng.randint(_MIN_GAP_MINUTES, _FILLER_SPAN_MINUTES)
        when = src.question_when - timedelta(minutes=minutes_before)
        entries.append((when, sid, _format_date(when), filler_session(rng)))
    entries.sort(key=lambda e: e[0])  # stable: ties keep evidence first

    question = {
        "question_id": _question_id(src, index, width),
        "question_type": src.question_type,
        "question": src.question,
        "answer": src.answer,
        "question_date": src.question_date,
        "haystack_session_ids": [e[1] for e in entries],
        "haystack_dates": [e[2] for e in entries],
        "haystack_sessions": [e[3] for e in entries],
        "answer_session_ids": list(src.answer_session_ids),
    }
    return question, len(entries), sum(len(e[3]) for e in entries)


def generate_dataset(
    out_path: Path,
    *,
    n_questions: int,
    scale: Scale,
    seed: int = 0,
    source: Path | None = None,
) -> GenerationStats:
    """Write a synthetic LongMemEval-format JSON array of ``n_questions`` questions to ``out_path``.

    Source questions (default: the bundled sample) are cycled in order; each keeps its type,
    question, answer, question_date, answer_session_ids and evidence sessions (turns, has_answer
    flags and dates unchanged), and gets a fresh haystack of filler sessions dated over the year
    before question_date, sorted by date. ``scale="s"`` gives 38-62 sessions per question (≈48,
    ≈10 turns each); ``scale="m"`` gives ≈500. Question ``i`` depends only on the source question,
    ``seed``, ``scale`` and ``i``, so the output is byte-identical across runs.

    Raises FileNotFoundError if the source file does not exist, `DatasetError` (a ValueError) if
    it is not a valid LongMemEval file, and ValueError if the arguments are invalid.
    """
    started = time.perf_counter()
    if scale not in _SCALES:
        raise ValueError(f"scale must be 's' or 'm', got {scale!r}")
    if n_questions < 0:
        raise ValueError(f"n_questions must be >= 0, got {n_questions}")
    spec = _SCALES[scale]
    sources = _load_source(default_source() if source is None else Path(source))
    width = max(4, len(str(max(n_questions - 1, 0))))

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    sessions = turns = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as fh:
            fh.write("[")
            for i in range(n_questions):
                rng = random.Random(f"lme-bench/generate/{seed}/{scale}/{i}")
                question, n_sessions, n_turns = _build_question(
                    sources[i % len(sources)], i, width, spec, rng
                )
                if i:
                    fh.write(", ")
                fh.write(json.dumps(question))
                del question
                sessions += n_sessions
                turns += n_turns
            fh.write("]")
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, out_path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return GenerationStats(
        questions=n_questions,
        sessions=sessions,
        turns=turns,
        bytes=out_path.stat().st_size,
        seconds=time.perf_counter() - started,
    )
