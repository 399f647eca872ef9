"""The run's own check of the names hits carry: a hit naming a session key never ingested, a
turn its session does not have, or another session's (turn's) text under its name counts as
naming what was never stored; the run's share of such hits, over a small limit, makes its
provenance unverified, and the rows say why."""

from __future__ import annotations

from lme_bench.backends.protocol import Hit
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import session_keys
from lme_bench.report.provenance_check import unverified_label, unverified_text
from lme_bench.report.summary import provenance_words
from lme_bench.results.summary import name_check, summarize_retrieval
from lme_bench.retrieval.official_ids import evaluate_retrieval
from lme_bench.retrieval.provenance import RankingProvenance
from lme_bench.retrieval.stored_names import (
    UNSTORED_SHARE_LIMIT,
    NameCheck,
    check_names,
    every_hit_unstored,
    unverified,
)
from tests.factories import make_question

INSTANCE = Instance.model_validate(make_question())
KEYS = session_keys(INSTANCE)  # s000: the puppy session (4 turns); s001: sourdough (2 turns)
PUPPY = "user: Any tips for a first week with a puppy?\nassistant: Crate training helps a lot."
SOURDOUGH = "user: How long should sourdough proof in the fridge?"
MAX = "My golden retriever Max chews everything."


def _hit(text: str, key: str | None, turn: int | None = None) -> Hit:
    return Hit(text, 1.0, session_key=key, turn_index=turn)


def test_hits_named_as_stored_pass_whatever_their_text() -> None:
    hits = [
        _hit(PUPPY, "s000"),
        _hit(SOURDOUGH, "s001"),
        _hit("the user has a golden retriever named Max", "s000"),  # rewritten: key checked
        _hit("Offer chew", "s000"),  # too short to tell turns apart
        _hit("a note of several sessions", None),  # names nothing
    ]
    assert check_names(INSTANCE, KEYS, hits, "session") == NameCheck(named=4)
    turns = [_hit(MAX, "s000", 2), _hit(f"  {MAX.upper()}  ", "s000", 2), _hit(PUPPY, "s000", 0)]
    assert check_names(INSTANCE, KEYS, turns, "turn") == NameCheck(named=3)


def test_shifted_and_wrong_session_keys_name_sessions_never_stored() -> None:
    shifted = [_hit(PUPPY, "s001"), _hit(SOURDOUGH, "s002")]  # each key one past its own
    check = check_names(INSTANCE, KEYS, shifted, "session")
    assert (check.named, check.unknown_keys, check.other_text, check.unstored) == (
        2,
        ("s002",),
        1,
        2,
    )
    assert check.reason("session") == (
        "every hit names a session never stored: 1 by a session key never ingested ('s002');"
        " 1 holding the text of another session"
    )
    wrong = [_hit(PUPPY, f"note-{n}") for n in range(5)]
    check = check_names(INSTANCE, KEYS, wrong, "session")
    assert check.unstored == 5 and check.reason("session") == (
        "every hit names a session never stored: 5 by a session key never ingested"
        " ('note-0', 'note-1', 'note-2' …)"
    )
    half = [_hit(PUPPY, "s000"), _hit(PUPPY, "s001")]
    assert check_names(INSTANCE, KEYS, half, "session").reason("session") == (
        "1 of 2 hits name a session never stored: 1 holding the text of another session"
    )


def test_turn_indexes_past_the_session_or_off_by_one_name_turns_never_stored() -> None:
    hits = [
        _hit(MAX, "s000", 3),  # MAX is turn 2: the index shifted by one
        _hit("Offer chew toys and praise.", "s000", 4),  # the session has turns 0-3
        _hit(SOURDOUGH, "s001", -1),
        _hit(MAX, "s000", 2),
    ]
    check = check_names(INSTANCE, KEYS, hits, "turn")
    assert (check.named, check.past_end, check.other_text) == (4, 2, 1)
    assert check.reason("turn") == (
        "3 of 4 hits name a turn never stored: 2 by a turn index its session does not have;"
        " 1 holding the text of another turn"
    )


def test_the_share_is_unverified_only_above_the_limit() -> None:
    at_limit = round(UNSTORED_SHARE_LIMIT * 1000)
    assert not unverified(1000, at_limit) and unverified(1000, at_limit + 1)
    assert not unverified(0, 0) and unverified(1, 1)


def test_rows_carry_their_check_and_the_summary_its_share() -> None:
    right = evaluate_retrieval(INSTANCE, KEYS, [_hit(MAX, "s000", 2), _hit(SOURDOUGH, "s001", 0)])
    assert [(r.named_hits, r.unstored_hits, r.unstored_reason) for r in right] == [(2, 0, None)] * 2
    # Hits that map to a ranking are scored, and their rows say how many names were wrong ...
    shifted = evaluate_retrieval(INSTANCE, KEYS, [_hit(MAX, "s001", 2), _hit(PUPPY, "s002", 0)])
    assert [r.status for r in shifted] == ["ok", "ok"]
    assert [r.unstored_reason for r in shifted] == [
        "every hit names a session never stored: 1 by a session key never ingested ('s002');"
        " 1 holding the text of another session",
        "every hit names a turn never stored: 1 by a session key never ingested ('s002');"
        " 1 by a turn index its session does not have",
    ]
    assert all(r.unstored_hits == 2 for r in shifted)
    # ... and where none maps, the rows are not applicable because of the names.
    wrong = evaluate_retrieval(INSTANCE, KEYS, [_hit(MAX, "x-s000", 2), _hit(PUPPY, "x-s001", 0)])
    assert [(r.status, r.reason, r.unstored_hits) for r in wrong] == [
        ("not-applicable", every_hit_unstored("session"), 2),
        ("not-applicable", every_hit_unstored("turn"), 2),
    ]
    # A system naming sessions but no turns: turns are matched within the sessions it names,
    # so its turn rows rest on its session names and say so.
    sessions_only = RankingProvenance("exact", "attributed")
    rows = evaluate_retrieval(INSTANCE, KEYS, [_hit(PUPPY, "s001")], sessions_only)
    assert [r.unstored_reason for r in rows] == [
        "every hit names a session never stored: 1 holding the text of another session"
    ] * 2
    unnamed = evaluate_retrieval(INSTANCE, KEYS, [_hit(PUPPY, None)], RankingProvenance())
    assert {r.reason for r in unnamed} != {every_hit_unstored("session")}

    summary = summarize_retrieval([*right, *shifted])
    names = summary["session"]["names"]
    assert (names["named_hits"], names["unstored_hits"], names["share"]) == (4, 2, 0.5)
    assert names["unverified"] and names["questions"] == [INSTANCE.question_id]
    assert unverified_label(summary["session"], "session") == (
        "unverified: 50.0% of hits name sessions never stored"
    )
    assert provenance_words(summary).startswith("session level: unverified: 50.0% of hits")
    assert "exact" not in provenance_words(summary)
    assert unverified_text(summary) == (  # both levels rest on the same counts: said once
        "provenance unverified: 50.0% of hits name sessions never stored (session and turn"
        " level, 2 of 4)"
    )
    summary["turn"]["names"].update(named_hits=8, unstored_hits=3, share=3 / 8)
    assert unverified_text(summary) == (
        "provenance unverified: 50.0% of hits name sessions never stored (session level, 2 of"
        " 4); 37.5% of hits name sessions or turns never stored (turn level, 3 of 8)"
    )
    clean = summarize_retrieval(right)
    assert provenance_words(clean).startswith("exact (") and unverified_text(clean) == ""
    assert name_check([]) is None
