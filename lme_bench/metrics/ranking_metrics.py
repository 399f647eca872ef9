"""Retrieval metrics with the exact semantics of the official LongMemEval evaluation.

The official scripts (``src/retrieval/run_retrieval.py`` and ``eval_utils.py`` in
xiaowu0162/LongMemEval) rank *indices* into a per-question corpus. Here every item is named by its
*official id* instead, which lets a memory system's ranking be scored without rebuilding the
corpus order. On the same ranking the numbers are the same as the official ones.

Ids
    Session granularity: one corpus entry per session, its id is the session id. Turn
    granularity: one corpus entry per *user* turn, id ``<session_id>_<n>`` where ``n`` counts all
    turns of the session (user and assistant) from 1.

Evidence rule
    An id is evidence exactly when it contains the substring ``answer``.

"noans" rule
    Inside a session whose id contains ``answer``, whatever is not really evidence gets every
    ``answer`` in its id replaced by ``noans``: the whole session when none of its user turns has
    ``has_answer`` (also when it has no user turn at all), and at turn level every turn that is
    not a user turn with ``has_answer`` true. The official corpus has user turns only; our
    rankings may also hold assistant turns, which are renamed the same way so that they are never
    evidence.

Metrics at cutoff k (k in 1, 3, 5, 10, 30, 50)
    The evidence set is the set of distinct evidence ids of the corpus.
    ``recall_any@k`` is 1.0 when some evidence id is among the first k ranked ids, else 0.0.
    ``recall_all@k`` is 1.0 when every evidence id is among the first k ranked ids, else 0.0.
    ``ndcg_any@k`` uses binary relevance (1 for an evidence id, 0 otherwise) and
    ``DCG = rel_1 + sum_{i>=2} rel_i / log2(i)`` over the first k ranks (so ranks 1 and 2 both
    weigh 1). The ideal DCG is the same formula applied to the relevances of *all corpus entries*
    sorted in descending order, cut at k; an id repeated in the corpus counts once per entry.
    Ranked ids are scored position by position, duplicates included. A ranked id that is not in
    the corpus (an assistant turn, say) has its own relevance (the evidence rule) but never joins
    the evidence set that the recalls and the ideal DCG are built from.

No-evidence quirk
    A question whose corpus holds no evidence id (its evidence sits only in assistant turns, for
    instance) gets ``recall_any = 0.0`` (nothing to find), ``recall_all = 1.0`` (vacuously all
    found) and ``ndcg_any = 0.0`` (the official code returns 0 when the ideal DCG is 0).

Session level from a turn-level ranking
    Every turn id is mapped to its session by dropping the text from its last ``_`` on (an id
    without ``_`` maps to the empty string); a ``noans`` turn of an evidence session therefore
    maps to a ``noans`` session distinct from the ``answer`` one. For each k an effective cutoff
    starts at k and grows one rank at a time until the first effective-cutoff ranked turns span k
    distinct sessions, but it never grows past the number of corpus turns plus one (and when k
    already exceeds the corpus size it stays k). The metrics are then computed at that effective
    cutoff on the *list of session ids, one per turn, duplicates kept*: the evidence set is the set
    of distinct evidence sessions, but the DCG counts every evidence turn at its own rank and the
    ideal DCG counts one 1 per evidence turn of the corpus, both cut at the effective cutoff.

Averages
    A benchmark figure is the plain mean of a metric over the questions, skipping abstention
    questions (ids containing ``_abs``); the caller does that filtering.

Floating point
    Sums follow NumPy's pairwise summation order and ranks use ``math.log2``, so results agree bit
    for bit with the NumPy-based official code (up to platform differences in ``log2``, which we
    found only at ranks beyond 1,600).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

K_VALUES: tuple[int, ...] = (1, 3, 5, 10, 30, 50)

_EVIDENCE_MARK = "answer"
_NOT_EVIDENCE_MARK = "noans"


def _names_for(k_values: Sequence[int]) -> tuple[str, ...]:
    names: list[str] = []
    for k in k_values:
        names.extend((f"recall_any@{k}", f"recall_all@{k}", f"ndcg_any@{k}"))
    return tuple(names)


METRIC_NAMES: tuple[str, ...] = _names_for(K_VALUES)


# --------------------------------------------------------------------------- ids


def is_evidence(official_id: str) -> bool:
    """The official evidence rule: the id contains ``answer``."""
    return _EVIDENCE_MARK in official_id


def _demote(official_id: str) -> str:
    return official_id.replace(_EVIDENCE_MARK, _NOT_EVIDENCE_MARK)


def official_session_id(session_id: str, user_turns_have_answer: bool) -> str:
    """Corpus id of a session at session granularity.

    ``user_turns_have_answer`` must be true when at least one user turn of the session has
    ``has_answer`` true (false for a session without user turns). An evidence-looking session
    without such a turn is demoted to ``noans``.
    """
    if is_evidence(session_id) and not user_turns_have_answer:
        return _demote(session_id)
    return session_id


def official_turn_id(session_id: str, turn_number: int, role: str, has_answer: bool) -> str:
    """Corpus id of a turn at turn granularity; ``turn_number`` counts all turns from 1.

    In an evidence-looking session only a user turn with ``has_answer`` keeps ``answer`` in its
    id; every other turn (assistant turns included) is demoted to ``noans``.
    """
    turn_id = f"{session_id}_{turn_number}"
    if is_evidence(session_id) and not (role == "user" and has_answer):
        return _demote(turn_id)
    return turn_id


def _session_of_turn(turn_id: str) -> str:
    return turn_id.rpartition("_")[0]


# --------------------------------------------------------------------- arithmetic

_UNROLL = 8
_BLOCK = 128


def _pairwise_sum(values: Sequence[float]) -> float:
    """Sum in the same order as NumPy's float64 reduction (8 lanes, blocks of 128)."""
    count = len(values)
    if count < _UNROLL:
        total = 0.0
        for value in values:
            total += value
        return total
    if count <= _BLOCK:
        lanes = [values[lane] for lane in range(_UNROLL)]
        whole = count - count % _UNROLL
        for base in range(_UNROLL, whole, _UNROLL):
            for lane in range(_UNROLL):
                lanes[lane] += values[base + lane]
        total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + (
            (lanes[4] + lanes[5]) + (lanes[6] + lanes[7])
        )
        for index in range(whole, count):
            total += values[index]
        return total
    split = count // 2
    split -= split % _UNROLL
    return _pairwise_sum(values[:split]) + _pairwise_sum(values[split:])


def _dcg(relevances: Sequence[float]) -> float:
    """rel_1 + sum over ranks i >= 2 of rel_i / log2(i)."""
    if not relevances:
        return 0.0
    discounted = [relevances[rank - 1] / math.log2(rank) for rank in range(2, len(relevances) + 1)]
    return relevances[0] + _pairwise_sum(discounted)


def _relevance(official_id: str) -> float:
    return 1.0 if is_evidence(official_id) else 0.0


# ------------------------------------------------------------------------ scoring


class _Corpus:
    """What the metrics need from a corpus: its size, evidence set and evidence count."""

    __slots__ = ("evidence", "evidence_entries", "size")

    def __init__(self, corpus_ids: Sequence[str]) -> None:
        self.size = len(corpus_ids)
        flagged = [official_id for official_id in corpus_ids if is_evidence(official_id)]
        self.evidence_entries = len(flagged)
        self.evidence = frozenset(flagged)

    def ideal_dcg(self, cutoff: int) -> float:
        length = min(cutoff, self.size)
        ones = min(self.evidence_entries, length)
        return _dcg([1.0] * ones + [0.0] * (length - ones))


def _score_at(
    ranked_ids: Sequence[str], corpus: _Corpus, cutoff: int
) -> tuple[float, float, float]:
    top = ranked_ids[:cutoff]
    retrieved = set(top)
    recall_any = 1.0 if any(doc in retrieved for doc in corpus.evidence) else 0.0
    recall_all = 1.0 if all(doc in retrieved for doc in corpus.evidence) else 0.0
    ideal = corpus.ideal_dcg(cutoff)
    ndcg = 0.0 if ideal == 0 else _dcg([_relevance(doc) for doc in top]) / ideal
    return recall_any, recall_all, ndcg


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"cutoffs must be positive, got {k}")


def _record(scores: dict[str, float], k: int, values: tuple[float, float, float]) -> None:
    scores[f"recall_any@{k}"], scores[f"recall_all@{k}"], scores[f"ndcg_any@{k}"] = values


def score_ranking(
    ranked_ids: Sequence[str],
    corpus_ids: Sequence[str],
    k_values: Sequence[int] = K_VALUES,
) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k`` and ``ndcg_any@k`` of one ranking of official ids."""
    corpus = _Corpus(corpus_ids)
    scores: dict[str, float] = {}
    for k in k_values:
        _check_k(k)
        _record(scores, k, _score_at(ranked_ids, corpus, k))
    return scores


def _session_cutoff(ranked_sessions: Sequence[str], k: int, corpus_size: int) -> int:
    """Smallest cutoff >= k whose prefix spans k distinct sessions, at most corpus_size + 1."""
    if k > corpus_size:
        return k
    seen: set[str] = set()
    for prefix_length, session in enumerate(ranked_sessions, start=1):
        seen.add(session)
        if len(seen) == k:
            # k distinct sessions need at least k ranks, so prefix_length >= k here
            return min(prefix_length, corpus_size + 1)
    return corpus_size + 1


def score_turn_ranking_at_session_level(
    ranked_turn_ids: Sequence[str],
    corpus_turn_ids: Sequence[str],
    k_values: Sequence[int] = K_VALUES,
) -> dict[str, float]:
    """Session-level metrics of a turn-level ranking, by the official procedure."""
    ranked_sessions = [_session_of_turn(turn_id) for turn_id in ranked_turn_ids]
    corpus = _Corpus([_session_of_turn(turn_id) for turn_id in corpus_turn_ids])
    scores: dict[str, float] = {}
    for k in k_values:
        _check_k(k)
        cutoff = _session_cutoff(ranked_sessions, k, corpus.size)
        _record(scores, k, _score_at(ranked_sessions, corpus, cutoff))
    return scores


def mean_metrics(
    rows: Iterable[Mapping[str, float]],
    names: Sequence[str] = METRIC_NAMES,
) -> dict[str, float]:
    """Mean of each named metric over the rows (NumPy summation order); ``{}`` for no rows.

    As in the official averaging, a metric missing from any row is left out of the result.
    """
    table = list(rows)
    if not table:
        return {}
    means: dict[str, float] = {}
    for name in names:
        if all(name in row for row in table):
            means[name] = _pairwise_sum([float(row[name]) for row in table]) / len(table)
    return means
