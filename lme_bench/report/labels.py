"""Words and number formats for every rendered page: a label per figure the summary holds (never
its key), percent with one decimal, counts with thousands separators, seconds, dollars, and
intervals that say when they rest on few questions or carry no information."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

SMALL_SAMPLE_N = 30  # fewer questions than this: an interval is shown with a flag
SMALL_SAMPLE = "small sample"

LABELS = {
    # ingestion totals (summary["ingestion"])
    "modes": "ingestion mode",
    "questions": "questions",
    "builds": "memory builds",
    "sessions": "sessions",
    "turns": "turns",
    "llm_calls": "memory agent model calls",
    "llm_calls_per_turn": "memory agent calls per turn",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "retries": "retried calls",
    "retries_throttled": "retries after throttling",
    "retries_timeout": "retries after a timeout",
    "retries_connection": "retries after a connection error",
    "retries_server": "retries after a server error",
    "capped_replies": "replies cut by the output cap",
    "timeouts": "timed-out attempts",
    "entries_written": "memory entries written",
    "sessions_not_ok": "sessions not ingested",
    "resumed_sessions": "sessions resumed from a checkpoint",
    "unfinished_sessions": "sessions of ingestions that did not finish",
    "seconds": "ingestion time (summed over questions, not wall time)",
    "dropped_tool_calls": "tool calls left out over the caps",
    "tool_calls": "memory agent tool calls",
    "memory_calls": "calls to the memory system",
    "unusable_tool_calls": "unusable tool calls",
    # the memory system's own calls (summary["memory_system"])
    "model_calls": "model calls",
    "embedding_calls": "embedding calls",
    "embedded_texts": "texts embedded",
    # cost parts (summary["cost"])
    "ingestion": "ingestion (memory agent)",
    "memory_model": "the memory system's own model",
    "answering": "answering (QA model)",
    "judging": "judging",
    "total": "run total",
    "per_question": "per question",
    "per_correct_answer": "per correct answer (primary judge)",
    # question types and averages
    "task-averaged": "task-averaged (mean of the per-type accuracies)",
    "overall": "overall",
    "abstention": "abstention questions",
}
MODES = {
    "raw": "raw (every turn stored verbatim)",
    "agentic": "agentic (a memory agent writes the memory)",
    "context-only": "context only (the agent keeps a context document)",
}
PROVENANCE = {
    "exact": "exact (the system's own session and turn fields)",
    "attributed": "attributed (hits matched to turns by their words)",
    "none": "none (hits carry no session or turn)",
}


def label(key: str) -> str:
    """The words for a summary key; a key without an entry is spelled out, never shown raw."""
    return LABELS.get(key) or key.replace("_", " ")


def count(value: int | float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def percent(value: float | None) -> str:
    """A fraction 0-1 as percent with one decimal."""
    return "-" if value is None else f"{100 * value:.1f}%"


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1:
        return f"{1000 * value:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes:,} min {rest} s"


def dollars(value: float | None) -> str:
    """US dollars: cents for a dollar or more, four decimals below (runs cost fractions)."""
    if value is None:
        return "-"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.4f}"


def words(values: Sequence[str], table: dict[str, str] | None = None) -> str:
    """A list of names as prose ("none" when empty), each through `table` when given."""
    shown = [(table or {}).get(v, v) for v in values]
    return ", ".join(shown) if shown else "none"


def counted(calls: dict[str, Any]) -> str:
    """{"search": 3, "add": 2} as "search 3, add 2" (numbers formatted), or "none"."""
    return ", ".join(f"{k.replace('_', ' ')} {count(v)}" for k, v in calls.items()) or "none"


def informative(ci: Sequence[float] | None, shown: Callable[[float], str]) -> bool:
    """An interval whose ends differ once formatted: [x, x] says nothing about uncertainty."""
    return ci is not None and shown(ci[0]) != shown(ci[1])


def small_sample(n: int) -> bool:
    return 0 < n < SMALL_SAMPLE_N


def interval(
    ci: Sequence[float] | None, n: int, shown: Callable[[float], str] = percent
) -> tuple[str, str]:
    """(the interval as words, its flag): "-" without one; "no spread" for a degenerate one
    (every resample alike, as with one question of a type); a small-sample flag under
    SMALL_SAMPLE_N questions."""
    if ci is None:
        return "-", ""
    flag = f"{SMALL_SAMPLE}, n = {n}" if small_sample(n) else ""
    if not informative(ci, shown):
        return ("no spread" if flag else f"no spread (n = {n})"), flag
    return f"{shown(ci[0])} to {shown(ci[1])}", flag


def interval_text(
    ci: Sequence[float] | None, n: int, shown: Callable[[float], str] = percent
) -> str:
    """The interval with its flag in parentheses, for Markdown and plain text."""
    text, flag = interval(ci, n, shown)
    return f"{text} ({flag})" if flag else text


def digest_words(identity: dict[str, Any]) -> str:
    """ "mem0, params 3f2a…" or "embedded, no params": a backend and what it was given."""
    backend = identity.get("backend") or "unknown backend"
    if not identity.get("params"):
        return f"{backend} (no parameters)"
    return f"{backend} (parameters digest {identity['params_digest']})"


def metric_label(metric: str) -> str:
    """ "recall_any@5" as "recall (any evidence) @5": the official metric in words."""
    name, _, k = metric.partition("@")
    words_for = {
        "recall_any": "recall, any evidence",
        "recall_all": "recall, all evidence",
        "ndcg_any": "nDCG",
    }
    return f"{words_for.get(name, name.replace('_', ' '))} @{k}" if k else label(metric)


ATTRIBUTIONS = {
    "correct": "correct",
    "ingestion-failed": "ingestion failed",
    "answer-failed": "answering failed",
    "judge-failed": "judging failed",
    "not-gradable": "no verdict",
    "rubric-scored": "scored by its rubric (no yes/no verdict)",
    "judge-unreadable": "judge's reply holds no yes or no",
    "memory-empty": "wrong: the memory was empty",
    "answered-wrong": "wrong (no evidence turns to look for)",
    "evidence-not-applicable": "wrong; evidence retrieved: not applicable (what the reader saw"
    " maps to no turn, e.g. a context document)",
    "retrieved-not-answered": "wrong though the evidence was retrieved",
    "evidence-not-retrieved": "wrong: the evidence was not retrieved",
}


def attribution(cause: str) -> str:
    return ATTRIBUTIONS.get(cause) or cause.replace("-", " ")
