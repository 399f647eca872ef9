"""Retrieval evaluation of one question: a memory's ranked entries -> official ids -> metrics.

This is scorer-side code: it reads the gold labels of the `Instance`. Entries map back to the
haystack through their session key and turn index (the tags the harness put on entries, or the
system's own provenance); hits without them (notes a memory agent wrote from several turns) are
left out of the ranking, and so
are assistant turns: the official retrieval corpus holds user turns only, so scores stay
comparable with the official ones. Where no hit maps back, the rows are not applicable, with
the reason (lme_bench.retrieval.provenance), never a ranking scored 0.

Turn granularity ranks `<session_id>_<turn_number>`; session granularity ranks session ids in
order of first appearance. Session metrics follow the official turn-to-session procedure
(lme_bench.metrics.ranking_metrics), so they are computed from the turn ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from lme_bench.backends.protocol import Hit
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import SessionKeyMap
from lme_bench.metrics.ranking_metrics import (
    is_evidence,
    official_session_id,
    official_turn_id,
    score_ranking,
    score_turn_ranking_at_session_level,
)
from lme_bench.retrieval.provenance import (
    EXACT,
    RankingProvenance,
    attributed_hits,
    no_provenance_reason,
    unmapped_reason,
)
from lme_bench.retrieval.stored_names import (
    NameCheck,
    StoredText,
    check_names,
    every_hit_unstored,
)

GRANULARITIES = ("session", "turn")


@dataclass(frozen=True, slots=True)
class RetrievalRow:
    question_id: str
    question_type: str
    is_abstention: bool
    granularity: str
    ranked_ids: list[str]
    metrics: dict[str, float] = field(default_factory=dict)
    n_evidence: int = 0
    status: str = "ok"  # ok | error | not-applicable (hits cannot be mapped to the haystack)
    error: str | None = None
    provenance: str = "exact"  # exact | attributed | none (lme_bench.retrieval.provenance)
    requested_depth: int | None = None  # hits asked for
    depth: int | None = None  # hits the system returned
    reason: str | None = None  # not-applicable: why the hits cannot be mapped
    search_seconds: float | None = None  # the memory's search call, timed, waits left out
    # the memory system's own calls during that search (None: not recorded)
    search_embedding_calls: int | None = None
    search_model_calls: int | None = None
    # the check of the hits' names (lme_bench.retrieval.stored_names; None: not checked)
    named_hits: int | None = None  # hits naming a session (turn) by the system's own fields
    unstored_hits: int | None = None  # of them, those naming one never stored
    unstored_reason: str | None = None  # why, in words (None: every name checks out)
    # None: tables before schema 7, whose search_seconds held the waits too
    search_wait_seconds: float | None = None  # waits on lme-bench's embedder, model load, limiters


def _user_turn_has_answer(instance: Instance, position: int) -> bool:
    return any(t.has_answer for t in instance.haystack_sessions[position] if t.role == "user")


def corpus_turn_ids(instance: Instance) -> list[str]:
    """The official turn corpus: user turns only."""
    ids = []
    for sid, turns in zip(instance.haystack_session_ids, instance.haystack_sessions, strict=True):
        for number, turn in enumerate(turns, start=1):
            if turn.role == "user":
                ids.append(official_turn_id(sid, number, turn.role, bool(turn.has_answer)))
    return ids


def has_evidence_turns(instance: Instance) -> bool:
    """Whether the official turn corpus holds an evidence turn (by the official rule)."""
    return any(is_evidence(t) for t in corpus_turn_ids(instance))


def corpus_session_ids(instance: Instance) -> list[str]:
    return [
        official_session_id(sid, _user_turn_has_answer(instance, position))
        for position, sid in enumerate(instance.haystack_session_ids)
    ]


def _positions(
    instance: Instance, hits: Sequence[Hit], keys: SessionKeyMap, expand: bool
) -> list[tuple[int, int]]:
    """(session position, turn index) of each hit. A hit that names its session but no turn is
    left out, or with `expand` (a system that keeps no turns) stands for every user turn of
    its session, in order: its session's place in the session ranking."""
    found = []
    for hit in hits:
        position = keys.position(hit.session_key or "")
        if position is None:
            continue
        index = hit.turn_index
        if index is None and expand:
            turns = instance.haystack_sessions[position]
            found += [(position, i) for i, turn in enumerate(turns) if turn.role == "user"]
        elif index is not None and index >= 0:
            found.append((position, index))
    return found


def official_rankings(
    instance: Instance, keys: SessionKeyMap, hits: Sequence[Hit], expand: bool = False
) -> tuple[list[str], list[str]]:
    """(turn ids, session ids), best first: each haystack user turn once (a session repeated in
    the haystack is in the official corpus twice, so its turn ids are ranked twice, as there),
    each session id once, in order of first appearance."""
    turn_ids: dict[tuple[int, int], str] = {}
    session_ids: dict[str, None] = {}
    session_id_at: dict[int, str] = {}  # by session position, made once
    for position, index in _positions(instance, hits, keys, expand):
        turns = instance.haystack_sessions[position]
        if index >= len(turns) or (position, index) in turn_ids:
            continue
        sid = instance.haystack_session_ids[position]
        turn = turns[index]
        if turn.role != "user":
            continue  # the official corpus holds user turns only
        turn_ids[position, index] = official_turn_id(
            sid, index + 1, turn.role, bool(turn.has_answer)
        )
        if position not in session_id_at:
            session_id_at[position] = official_session_id(
                sid, _user_turn_has_answer(instance, position)
            )
        session_ids.setdefault(session_id_at[position])
    return list(turn_ids.values()), list(session_ids)


def _mapped(
    instance: Instance, keys: SessionKeyMap, hits: Sequence[Hit], provenance: str, within: bool
) -> Sequence[Hit]:
    if provenance == "attributed":
        return attributed_hits(instance, keys, hits, within_session=within)
    return hits


def _unmapped(instance: Instance, keys: SessionKeyMap, hits: Sequence[Hit], expand: bool) -> bool:
    """No hit names a session of the haystack (with a turn, unless `expand`)."""
    return not _positions(instance, hits, keys, expand)


def _name_checks(
    instance: Instance, keys: SessionKeyMap, hits: Sequence[Hit], provenance: RankingProvenance
) -> dict[str, tuple[NameCheck, str] | None]:
    """Per granularity, the check of the names its ranking rests on and the granularity they
    name: the system's own turn names, else its session names where turns are matched within
    the sessions it names; None where the system names nothing there."""
    stored = StoredText(instance) if hits else None
    checks: dict[str, tuple[NameCheck, str] | None] = dict.fromkeys(GRANULARITIES)
    if provenance.session == "exact":
        checks["session"] = (check_names(instance, keys, hits, "session", stored), "session")
    if provenance.turn == "exact":
        checks["turn"] = (check_names(instance, keys, hits, "turn", stored), "turn")
    elif provenance.turn == "attributed" and provenance.session == "exact":
        checks["turn"] = checks["session"]
    return checks


def _with_check(row: RetrievalRow, checked: tuple[NameCheck, str] | None) -> RetrievalRow:
    if checked is None:
        return row
    check, named = checked
    return replace(
        row,
        named_hits=check.named,
        unstored_hits=check.unstored,
        unstored_reason=check.reason(named),
    )


def evaluate_retrieval(
    instance: Instance,
    keys: SessionKeyMap,
    hits: Sequence[Hit],
    provenance: RankingProvenance = EXACT,
    *,
    requested: int | None = None,
    depth: int | None = None,
    unmappable: str | None = None,
) -> list[RetrievalRow]:
    """The session and turn rows of one ranking. `unmappable`: why no hit of this memory can
    be mapped to the haystack whatever it returns (the rows are then not applicable)."""
    session_hits = _mapped(instance, keys, hits, provenance.session, within=False)
    turn_hits = _mapped(instance, keys, hits, provenance.turn, provenance.session == "exact")
    expand = provenance.turn != "exact"  # hits of a system that keeps no turns
    session_turns, session_ranked = official_rankings(instance, keys, session_hits, expand)
    if turn_hits is session_hits and not expand:  # exact provenance: the same turn ranking
        turn_ranked = session_turns
    else:
        turn_ranked, _ = official_rankings(instance, keys, turn_hits)
    turn_corpus = corpus_turn_ids(instance)
    session_corpus = corpus_session_ids(instance)
    rows = [
        RetrievalRow(
            instance.question_id,
            instance.question_type,
            instance.is_abstention,
            granularity="session",
            ranked_ids=session_ranked,
            metrics=score_turn_ranking_at_session_level(session_turns, turn_corpus),
            n_evidence=sum(is_evidence(sid) for sid in session_corpus),
            provenance=provenance.session,
            requested_depth=requested,
            depth=depth,
        ),
        RetrievalRow(
            instance.question_id,
            instance.question_type,
            instance.is_abstention,
            granularity="turn",
            ranked_ids=turn_ranked,
            metrics=score_ranking(turn_ranked, turn_corpus),
            n_evidence=sum(is_evidence(tid) for tid in turn_corpus),
            provenance=provenance.turn,
            requested_depth=requested,
            depth=depth,
        ),
    ]
    checks = _name_checks(instance, keys, hits, provenance)
    rows = [_with_check(row, checks[row.granularity]) for row in rows]
    unstored = {  # why no hit maps, where every hit names what was never stored
        row.granularity: every_hit_unstored(checked[1])
        if (checked := checks[row.granularity]) and checked[0].named == checked[0].unstored > 0
        else None
        for row in rows
    }
    reasons = {"session": unmappable, "turn": unmappable}
    if hits and not session_ranked and _unmapped(instance, keys, session_hits, expand):
        reasons["session"] = reasons["session"] or (
            unstored["session"] or unmapped_reason("session", provenance.session)
        )
    if hits and not turn_ranked and _unmapped(instance, keys, turn_hits, False):
        reasons["turn"] = reasons["turn"] or (
            unstored["turn"] or unmapped_reason("turn", provenance.turn)
        )
    for row in rows:
        if row.provenance == "none":
            reasons[row.granularity] = no_provenance_reason(row.granularity)
    return [
        replace(row, ranked_ids=[], metrics={}, status="not-applicable", reason=reason)
        if (reason := reasons[row.granularity]) is not None
        else row
        for row in rows
    ]


def failed_rows(
    question_id: str, question_type: str, is_abstention: bool, error: str
) -> list[RetrievalRow]:
    return [
        RetrievalRow(question_id, question_type, is_abstention, g, [], status="error", error=error)
        for g in GRANULARITIES
    ]
