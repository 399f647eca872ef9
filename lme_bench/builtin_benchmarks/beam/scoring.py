"""BEAM's scoring arithmetic, as the official `src/evaluation/` computes it; no model calls.

Rules (read from compute_metrics.py, run_evaluation.py and report_results.py):
- Every ability: each rubric item is judged by an LLM that replies with JSON holding a
  `score` (1.0, 0.5 or 0.0). The question's `llm_judge_score` is the sum of the item scores
  over the number of items, where each score is taken as `int(score)` — so a 0.5 counts 0 —
  except for event ordering, whose item scores are taken as `float(score)`.
- Event ordering also gets an ordering score: the response split at every newline (blank
  lines included) is aligned to the rubric (the reference order) one response line at a time,
  each line taking the first unused rubric item the LLM calls the same event; a matched line is
  replaced by that item's text. Then by text: tp = distinct items in both lists, fp = lines
  not in the rubric, fn = rubric items not among the lines; precision, recall, F1. Over the
  union of both lists (first-seen order), each item's rank is its last 1-based position in
  a list or len(union)+1 when absent; Kendall tau-b of the two rank lists, normalised as
  (tau+1)/2 (NaN when a list of ranks is constant, as scipy gives); final score tau_norm * F1.
- The reported score of a question is its `llm_judge_score`, but event ordering's is
  `tau_norm` (not the final score): report_results.py averages these per ability within a
  chat, then each ability's chat means over the chats. The official report has no overall
  figure; `overall` here is the equal-weight mean of the abilities, as papers report it.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lme_bench.builtin_benchmarks.beam.models import ABILITIES

EVENT_ORDERING = "event_ordering"


# ---- judge replies ------------------------------------------------------------------------


def parse_judge_reply(text: str) -> Any | None:
    """The JSON in a judge's reply, found as the official parser finds it (a fenced block,
    the whole reply, or the first shortest {...} / [...] span); None when there is none.
    (The official code then tries the json_repair package; lme-bench does not.)"""
    text = text.strip()
    if text.startswith("```"):
        fenced = re.search(r"```(?:json)?\s*(\[.*\]|\{.*\})\s*```", text, re.DOTALL)
        if fenced:
            text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    span = re.search(r"(\{.*?\}|\[.*?\])", text, re.DOTALL)
    if span:
        try:
            return json.loads(span.group(1))
        except json.JSONDecodeError:
            return None
    return None


def item_score(parsed: Any, ability: str) -> float | None:
    """The score of one rubric item as the official evaluator adds it: `int(score)` (0.5 -> 0),
    `float(score)` for event ordering; None when the reply holds no usable score."""
    if not isinstance(parsed, dict) or "score" not in parsed:
        return None
    convert: Callable[[Any], float] = float if ability == EVENT_ORDERING else int
    try:
        return float(convert(parsed["score"]))
    except (TypeError, ValueError, OverflowError):
        return None


def judge_score(item_scores: Sequence[float | None]) -> float:
    """A question's llm_judge_score: the item scores' sum over the number of items; an item
    without a usable score counts 0 (the official run stops with an error there)."""
    if not item_scores:
        raise ValueError("a question needs at least one rubric item")
    return sum(s or 0.0 for s in item_scores) / len(item_scores)


def says_same_event(reply: str) -> bool:
    """The official equivalence rule: 'yes' anywhere in the reply, any case."""
    return "yes" in reply.lower()


# ---- event ordering -------------------------------------------------------------------------


def response_lines(response: str) -> list[str]:
    """The response's items as the official scorer takes them: split at every newline."""
    return response.split("\n")


Alignment = Generator[tuple[str, str], bool, list[str]]


def alignment(reference: Sequence[str], system: Sequence[str]) -> Alignment:
    """Align response lines to rubric items: yields (rubric item, line) pairs to decide and is
    sent True when the two name the same event; returns the lines with matched ones replaced
    by their rubric item. Each line takes the first unused item said to match."""
    used: set[int] = set()
    canonical: list[str] = []
    for line in system:
        matched: int | None = None
        for index, item in enumerate(reference):
            if index in used:
                continue
            if (yield item, line):
                matched = index
                break
        if matched is None:
            canonical.append(line)
        else:
            canonical.append(reference[matched])
            used.add(matched)
    return canonical


def align(
    reference: Sequence[str], system: Sequence[str], same: Callable[[str, str], bool]
) -> list[str]:
    """`alignment` driven by a plain function (rubric item, line) -> same event?"""
    steps = alignment(reference, system)
    try:
        pair = next(steps)
        while True:
            pair = steps.send(same(*pair))
    except StopIteration as done:
        return list(done.value)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b by counting pairs; NaN when either sequence is constant (or short)."""
    if len(x) != len(y):
        raise ValueError("the two rankings differ in length")
    concordant_minus_discordant = 0
    pairs = x_tied = y_tied = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            pairs += 1
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            x_tied += dx == 0
            y_tied += dy == 0
            concordant_minus_discordant += dx * dy
    if pairs in (x_tied, y_tied):
        return math.nan
    tau = concordant_minus_discordant / math.sqrt(pairs - x_tied) / math.sqrt(pairs - y_tied)
    return min(1.0, max(-1.0, tau))


@dataclass(frozen=True, slots=True)
class OrderingScore:
    precision: float
    recall: float
    f1: float
    tau_norm: float  # may be NaN, as the official score is in degenerate cases
    final_score: float  # tau_norm * f1


def ordering_score(reference: Sequence[str], canonical: Sequence[str]) -> OrderingScore:
    """The official event-ordering figures for the rubric and the aligned response lines."""
    tp = len(set(reference) & set(canonical))
    fp = sum(1 for line in canonical if line not in reference)
    fn = sum(1 for item in reference if item not in canonical)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    union = list(dict.fromkeys([*reference, *canonical]))
    absent = len(union) + 1

    def ranks(seq: Sequence[str]) -> list[int]:
        position = {item: i + 1 for i, item in enumerate(seq)}
        return [position.get(item, absent) for item in union]

    tau = kendall_tau_b(ranks(reference), ranks(canonical))
    tau_norm = (tau + 1) / 2
    return OrderingScore(precision, recall, f1, tau_norm, tau_norm * f1)


# ---- aggregation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuestionScore:
    conversation_id: str
    ability: str
    score: float  # the reported figure: llm_judge_score, or tau_norm for event ordering


def reported_score(ability: str, llm_judge_score: float, ordering: OrderingScore | None) -> float:
    if ability == EVENT_ORDERING:
        if ordering is None:
            raise ValueError("an event-ordering question needs its ordering score")
        return ordering.tau_norm
    return llm_judge_score


@dataclass(frozen=True, slots=True)
class BeamReport:
    per_chat: dict[str, dict[str, float]]  # conversation -> ability -> mean of its questions
    per_ability: dict[str, float]  # mean over the chats of the chat means
    overall: float  # mean of the abilities present (not in the official report)


def aggregate(scores: Iterable[QuestionScore]) -> BeamReport:
    """Per chat and ability the mean of the questions, per ability the mean over chats (as
    report_results.py averages), overall the equal-weight mean of the abilities."""
    grouped: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in scores:
        grouped[row.conversation_id][row.ability].append(row.score)
    per_chat = {
        chat: {ability: sum(v) / len(v) for ability, v in abilities.items()}
        for chat, abilities in grouped.items()
    }
    per_ability = _ability_means(per_chat)
    overall = sum(per_ability.values()) / len(per_ability) if per_ability else math.nan
    return BeamReport(per_chat, per_ability, overall)


def _ability_means(per_chat: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    known = [a for a in ABILITIES if any(a in chat for chat in per_chat.values())]
    others = sorted({a for chat in per_chat.values() for a in chat} - set(known))
    means: dict[str, float] = {}
    for ability in [*known, *others]:
        values = [chat[ability] for chat in per_chat.values() if ability in chat]
        means[ability] = sum(values) / len(values)
    return means
