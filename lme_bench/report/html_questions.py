"""The run report's question cards: each question with its date, gold answer, hypothesis, every
judge's verdict and reply, the failure attribution, what its memory held after ingestion, and
the top retrieved turns, evidence marked.

Scorer-side code: it reads the gold labels of each `Instance`. Every text is escaped (dataset
text and hypotheses are untrusted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from lme_bench.dataset.models import Instance
from lme_bench.metrics.ranking_metrics import is_evidence, official_session_id, official_turn_id
from lme_bench.report.html_memory import memory_held
from lme_bench.report.labels import attribution
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval.official_ids import RetrievalRow

TOP_TURNS = 10  # retrieved turns shown per question
SHORT_CHARS = 300  # longer texts are collapsed behind their first SHORT_CHARS
LONG_CHARS = 4000  # and cut after LONG_CHARS


@dataclass(frozen=True, slots=True)
class RetrievedTurn:
    rank: int
    turn_id: str  # official id; holds "answer" when the turn is evidence
    date: str
    text: str | None  # None: the id is not a turn of this question's haystack

    @property
    def evidence(self) -> bool:
        return is_evidence(self.turn_id)


@dataclass(frozen=True, slots=True)
class Asked:
    """What the page shows of a question: its text and gold answer, not its haystack (holding
    every question's haystack until the page is written took 140 MB for an S run)."""

    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: str


@dataclass(frozen=True, slots=True)
class QuestionView:
    asked: Asked
    hypothesis: HypothesisRow | None
    verdicts: list[ScoreRow]  # first judgment (repeat 0) of each judge, primary judge first
    retrieved: list[RetrievedTurn] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what failed, stage by stage
    notes: list[str] = field(default_factory=list)  # what the figures rest on, not a failure
    memory: Mapping[str, Any] | None = None  # what its memory held, read back after ingestion
    memory_recorded: bool = False  # whether an ingestion recorded `memory`

    @property
    def wrong(self) -> bool:
        """The primary judge's verdict is "wrong" (the official rule: no "yes" in its reply)."""
        first = self.verdicts[0] if self.verdicts else None
        return first is not None and first.status == "ok" and first.label is False

    @property
    def failed(self) -> bool:
        return bool(self.errors)


def turn_texts(instance: Instance, wanted: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Official turn id -> (session date, text), for the `wanted` ids that are turns of the
    haystack (an id two turns share names the later one). Only the sessions an id can name are
    looked at: a report shows ten turns of each question's hundreds."""
    sessions: dict[str, list[int]] = {}  # official session id -> haystack positions, in order
    for position, session_id in enumerate(instance.haystack_session_ids):
        for name in dict.fromkeys((session_id, official_session_id(session_id, False))):
            sessions.setdefault(name, []).append(position)
    texts = {}
    for turn_id in wanted:
        session, _, number_text = turn_id.rpartition("_")
        number = int(number_text) if number_text.isdecimal() else 0
        for position in sessions.get(session, []):
            turns = instance.haystack_sessions[position]
            if not 1 <= number <= len(turns):
                continue
            turn, session_id = turns[number - 1], instance.haystack_session_ids[position]
            if official_turn_id(session_id, number, turn.role, bool(turn.has_answer)) == turn_id:
                texts[turn_id] = (instance.haystack_dates[position], turn.content)
    return texts


def retrieved_turns(instance: Instance, ranked_ids: Sequence[str]) -> list[RetrievedTurn]:
    """The first TOP_TURNS turns of a turn-level ranking, with their text from the haystack."""
    top = ranked_ids[:TOP_TURNS]
    texts = turn_texts(instance, top)
    shown = []
    for rank, turn_id in enumerate(top, start=1):
        date, text = texts.get(turn_id, ("", None))
        shown.append(RetrievedTurn(rank, turn_id, date, text))
    return shown


def question_view(
    instance: Instance,
    hypothesis: HypothesisRow | None,
    verdicts: list[ScoreRow],
    turn_ranking: RetrievalRow | None,
    run_error: str | None,
    memory_empty: bool = False,
    memory: tuple[bool, Mapping[str, Any] | None] = (False, None),
    context_unchanged: bool = False,
) -> QuestionView:
    """`memory`: (recorded, excerpt) of what the question's memory held after ingestion."""
    errors = [f"run: {run_error}"] if run_error else []
    notes = ["memory empty after ingestion: it stored nothing"] if memory_empty else []
    if context_unchanged:
        notes.append("context document never changed after the first session")
    if turn_ranking is not None and turn_ranking.status == "error":
        errors.append(f"retrieval: {turn_ranking.error or turn_ranking.status}")
    elif turn_ranking is not None and turn_ranking.status != "ok":
        notes.append(f"retrieval {turn_ranking.status}: {turn_ranking.reason or 'no reason'}")
    if turn_ranking is not None and turn_ranking.unstored_reason:  # its hits' names
        notes.append(f"retrieval: {turn_ranking.unstored_reason}")
    if hypothesis is not None and hypothesis.status != "ok":
        errors.append(f"answer: {hypothesis.error or hypothesis.status}")
    errors += [f"judge {v.judge}: {v.error or v.status}" for v in verdicts if v.status == "error"]
    retrieved = (
        retrieved_turns(instance, turn_ranking.ranked_ids)
        if turn_ranking is not None and turn_ranking.status == "ok"
        else []
    )
    asked = Asked(
        instance.question_id,
        instance.question_type,
        instance.question,
        instance.answer,
        instance.question_date,
    )
    recorded, excerpt = memory
    return QuestionView(asked, hypothesis, verdicts, retrieved, errors, notes, excerpt, recorded)


def _text(value: str | None, missing: str = "none") -> str:
    """Escaped text; a long one collapsed behind its beginning; `missing` in grey for None."""
    if value is None:
        return f'<span class="none">{escape(missing)}</span>'
    if len(value) <= SHORT_CHARS:
        return f'<span class="text">{escape(value)}</span>'
    rest = value[:LONG_CHARS] + (" …" if len(value) > LONG_CHARS else "")
    return (
        f"<details><summary>{escape(value[:SHORT_CHARS])} …</summary>"
        f'<div class="text">{escape(rest)}</div></details>'
    )


def _verdict(row: ScoreRow) -> str:
    if row.status == "ok" and row.score is not None:  # a rubric score (BEAM), no yes/no
        word, css = f"score {row.score:.3f}", "none"
    elif row.status != "ok" or row.label is None:
        word, css = f"no verdict ({row.status})", "none"
    else:
        word, css = ("correct", "right") if row.label else ("wrong", "wrong")
    readable = "" if row.readable is not False else " (reply holds no yes or no)"
    return (
        f'<tr><td>{escape(row.judge)}</td><td class="{css}">{word}{readable}</td>'
        f"<td>{escape(attribution(row.attribution))}</td>"
        f"<td>{_text(row.raw_verdict, 'no reply')}</td></tr>"
    )


def _retrieved(turns: Sequence[RetrievedTurn]) -> str:
    if not turns:
        return ""
    items = []
    for turn in turns:
        css = ' class="evidence"' if turn.evidence else ""
        mark = "<b>evidence</b> " if turn.evidence else ""
        items.append(
            f"<li{css}>{mark}<code>{escape(turn.turn_id)}</code> {escape(turn.date)}: "
            f"{_text(turn.text, 'not a turn of this question')}</li>"
        )
    return (
        f"<details><summary>top {len(turns)} retrieved user turns "
        f"({sum(t.evidence for t in turns)} evidence)</summary><ol>{''.join(items)}</ol>"
        "</details>"
    )


def _no_answer(view: QuestionView) -> str:
    if view.hypothesis is None:
        return "not answered in this run"
    return "no answer: the answer stage failed"


def question_card(view: QuestionView) -> str:
    """One question as a <section> whose data attributes the page's filters read."""
    instance, hypothesis = view.asked, view.hypothesis
    rows = [
        ("date", escape(instance.question_date)),
        ("question", _text(instance.question)),
        ("gold answer", _text(instance.answer)),
        ("answer given", _text(hypothesis.hypothesis if hypothesis else None, _no_answer(view))),
    ]
    if hypothesis is not None and hypothesis.evidence_in_context is not None:
        held = "yes" if hypothesis.evidence_in_context else "no"
        rows.append(("evidence in the reader's context", held))
    rows.append(("memory holds", memory_held(view.memory, view.memory_recorded)))
    if view.notes:
        rows.append(("note", "<br>".join(escape(n) for n in view.notes)))
    if view.errors:
        rows.append(("failed", "<br>".join(escape(e) for e in view.errors)))
    facts = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    verdicts = ""
    if view.verdicts:
        verdicts = (
            '<table class="verdicts"><tr><th>judge</th><th>verdict</th><th>attribution</th>'
            f"<th>judge's reply</th></tr>{''.join(_verdict(v) for v in view.verdicts)}</table>"
        )
    state = "is-wrong" if view.wrong else ("is-failed" if view.failed else "")
    return (
        f'<section class="q {state}" data-type="{escape(instance.question_type)}" '
        f'data-wrong="{int(view.wrong)}" data-failed="{int(view.failed)}">'
        f"<h3>{escape(instance.question_id)} <small>{escape(instance.question_type)}</small></h3>"
        f"<dl>{facts}</dl>{verdicts}{_retrieved(view.retrieved)}</section>"
    )
