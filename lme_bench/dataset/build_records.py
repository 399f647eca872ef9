"""Questions of shared builds (LoCoMo), read back from their split (lme_bench.benchmarks.split):
`<split>/b/<n>.json` a build's sessions, `<split>/q/<index>.json` a question's public view (text
and date, nothing else), `<split>/g/<index>.json` its gold labels.

`scorer_record` joins them into the record the stages read (an `Instance` in shape): the stages
show a memory system or a reader only its leak-safe view (lme_bench.dataset.views.make_view),
sessions under opaque keys (each turn with its speaker's name where the benchmark names
speakers) and the public question, so the gold labels stay scorer-side as
LongMemEval's do. A question without a date of its own (LoCoMo) is asked on the date of its
build's last session.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from lme_bench.dataset.models import Instance, Turn

EVIDENCE_PREFIX = "answer_"
"""Scorer-side session ids of evidence sessions carry it (the retrieval metrics' evidence
rule, lme_bench.metrics.ranking_metrics.is_evidence); never part of a view."""


class BuildQuestion(Instance):
    """A shared-build question in the stages' record shape; its abstention comes from its gold
    labels (a LoCoMo adversarial question), not from its id."""

    abstains: bool = False
    rubric: tuple[str, ...] = ()
    benchmark: str = ""
    """The benchmark's name (`locomo`, `beam`, a plug-in's); scorer side."""
    """The items a rubric-judged benchmark's judge scores the answer by (BEAM; scorer side)."""

    @property
    def is_abstention(self) -> bool:
        return self.abstains


@functools.lru_cache(maxsize=16)
def _build_sessions(
    shard: str,
) -> tuple[tuple[str, str, tuple[tuple[str, str | None, str], ...]], ...]:
    """(key, date, ((role, speaker, content), …)) per session, in date order."""
    row = json.loads(Path(shard).read_bytes())
    return tuple(
        (s["key"], s["date"], tuple((t[1], t[2], t[3]) for t in s["turns"]))
        for s in row["sessions"]
    )


def gold_file(shard: str) -> Path:
    """The gold labels' file of the question whose public view is `shard`."""
    return Path(shard).parent.parent / "g" / Path(shard).name


def gold_of(shard: str) -> dict[str, Any]:
    """The gold labels of the question whose public view is `shard` (scorer side only)."""
    found: dict[str, Any] = json.loads(gold_file(shard).read_bytes())
    return found


def scorer_record(
    question_id: str, question_type: str, shard: str, build_shard: str, benchmark: str = ""
) -> Instance:
    """The question in the stages' record shape: the build's sessions under their keys (in
    date order), the public question, and scorer-side its gold answer and evidence marks."""
    public = json.loads(Path(shard).read_bytes())
    gold = gold_of(shard)
    sessions = _build_sessions(build_shard)
    evidence_sessions = set(gold["evidence_sessions"])
    evidence_turns = set(gold["evidence_turns"])
    question_date = public["question_date"] or (sessions[-1][1] if sessions else "")
    answers = gold["answers"]
    return BuildQuestion.model_construct(
        question_id=question_id,
        question_type=question_type,
        question=public["question"],
        answer=answers[0] if answers else "",
        question_date=question_date,
        haystack_session_ids=[
            (EVIDENCE_PREFIX if key in evidence_sessions else "") + key for key, _, _ in sessions
        ],
        haystack_dates=[date for _, date, _ in sessions],
        haystack_sessions=[
            [
                Turn.model_construct(
                    role=role,
                    content=content,
                    speaker=speaker,
                    has_answer=f"{key}:{i}" in evidence_turns,
                )
                for i, (role, speaker, content) in enumerate(turns)
            ]
            for key, _, turns in sessions
        ],
        answer_session_ids=[key for key, _, _ in sessions if key in evidence_sessions],
        abstains=gold["abstention"],
        rubric=tuple((gold.get("native") or {}).get("rubric") or ()),
        benchmark=benchmark,
    )
