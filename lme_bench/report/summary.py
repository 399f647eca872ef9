"""summary.md's retrieval part and its memory-system part: what was searched (backend, its
parameters' digest, the search, how hits map to the haystack), how fast, and the figures."""

from __future__ import annotations

from typing import Any

from lme_bench.report.labels import PROVENANCE, count, digest_words, metric_label, seconds, words
from lme_bench.report.provenance_check import name_check_line, unverified_label
from lme_bench.results.summary import not_applicable
from lme_bench.retrieval.official_ids import GRANULARITIES

SHOWN_METRICS = (
    "recall_any@5",
    "recall_all@5",
    "ndcg_any@5",
    "recall_any@10",
    "recall_all@10",
    "ndcg_any@10",
)
WITH_USER_EVIDENCE_ROW = "overall, with user-turn evidence"
PROVENANCE_NOTES = {
    "exact": "hits mapped to the haystack by the system's own fields",
    "attributed": "hits matched to haystack turns by their words (the system rewrites what"
    " it stores); not comparable with exact figures",
    "none": "the system's hits carry no provenance: not applicable, not scored",
}


def provenance_words(summary: dict[str, Any]) -> str:
    """How hits were mapped, per granularity that has rows ("-" without retrieval); unverified
    where too many hits named sessions or turns never stored."""
    found = {
        g: unverified_label(summary[g], g) or words(kinds, PROVENANCE)
        for g in GRANULARITIES
        if (kinds := (summary.get(g) or {}).get("provenance"))
    }
    if len(set(found.values())) == 1 and len(found) == len(GRANULARITIES):
        return f"{next(iter(found.values()))}, at session and turn level"
    return "; ".join(f"{g} level: {kinds}" for g, kinds in found.items()) or "-"


def latency_words(latency: dict[str, Any] | None) -> str:
    """ "p50 12 ms, p95 40 ms over 500 searches, the system's own time (...)", or "" when the
    rows did not time it."""
    if not latency:
        return ""
    words = (
        f"p50 {seconds(latency['p50_s'])}, p95 {seconds(latency['p95_s'])} over "
        f"{count(latency['n'])} searches, {wait_words(latency)}"
    )
    own = [
        f"{count(latency[key])} {label}"
        for key, label in (("embedding_calls", "embedding calls"), ("model_calls", "model calls"))
        if latency.get(key)
    ]
    return words + (f"; with {' and '.join(own)} of the system's own" if own else "")


def wait_words(latency: dict[str, Any]) -> str:
    """What the latency figures leave out: the searches' waits on lme-bench."""
    if latency.get("wait_s") is None:  # tables before schema 7
        return "waits on lme-bench included (recorded before they were kept apart)"
    if not latency.get("waited"):
        return "the system's own time (no search waited on lme-bench)"
    return (
        f"the system's own time ({count(latency['waited'])} searches waited on lme-bench's "
        f"embedder, a model load or a limiter, {seconds(latency['wait_s'])} in all, p95 "
        f"{seconds(latency.get('wait_p95_s'))}, left out)"
    )


def context_tokens(summary: dict[str, Any]) -> float | None:
    """The reader's input tokens a question answered: the context it was given (the memory's
    entries and the question in the QA prompt); None without answers."""
    answers = (summary.get("qa") or {}).get("answers") or {}
    answered = answers.get("answered")
    return answers.get("input_tokens", 0) / answered if answered else None


def speed_and_context_words(summary: dict[str, Any]) -> list[str]:
    """For the headline: search latency p50 / p95 (the system's own) and context tokens."""
    parts = []
    latency = summary.get("search_latency")
    if latency:
        parts.append(
            f"search p50 {seconds(latency['p50_s'])}, p95 {seconds(latency['p95_s'])}"
            + (" (waits on lme-bench left out)" if latency.get("wait_s") is not None else "")
        )
    tokens = context_tokens(summary)
    if tokens is not None:
        parts.append(f"context {count(round(tokens))} tokens a question")
    return parts


def system_calls_words(system: dict[str, Any] | None) -> str:
    """The memory system's own model and embedding calls, in words."""
    if not system:
        return "none reported (the system made or reported no model calls of its own)"
    model = f" with {system['model']}" if system.get("model") else ""
    return (
        f"{count(system['model_calls'])} model calls{model} ({count(system['input_tokens'])} "
        f"input, {count(system['output_tokens'])} output tokens), "
        f"{count(system['embedding_calls'])} embedding calls "
        f"({count(system['embedded_texts'])} texts); "
        f"{count(system.get('capped_replies', 0))} replies cut by the output cap, "
        f"{count(system.get('timeouts', 0))} timed-out attempts"
    )


def memory_facts(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs naming the memory system the run searched."""
    memory = summary.get("memory") or {}
    facts = [("memory system", digest_words(memory) if memory else "-")]
    if memory.get("search"):
        facts.append(("search", memory["search"]))
    facts.append(("hits mapped to the haystack", provenance_words(summary)))
    latency = latency_words(summary.get("search_latency"))
    if latency:
        facts.append(("search latency", latency))
    facts.append(
        ("the memory system's own calls", system_calls_words(summary.get("memory_system")))
    )
    return facts


def memory_markdown(summary: dict[str, Any]) -> str:
    lines = ["## Memory system", ""]
    lines += [f"- {name}: {value}" for name, value in memory_facts(summary)]
    return "\n".join(lines) + "\n"


def not_applicable_lines(part: dict[str, Any]) -> list[str]:
    """One line per reason rows were not applicable, with its count of questions."""
    reasons = part.get("not_applicable_reasons") or {}
    return [
        f"Not applicable ({n} question{'s' * (n != 1)}, left out of the averages): {reason}."
        for reason, n in sorted(reasons.items())
    ]


def _provenance_lines(part: dict[str, Any], granularity: str) -> list[str]:
    """What the figures rest on, when it is not the usual exact mapping or names that check
    out."""
    found = part.get("provenance", ["exact"])
    lines = [f"Provenance: {p}: {PROVENANCE_NOTES[p]}." for p in found if p != "exact"]
    checked = name_check_line(part, granularity)
    lines += [checked] if checked else []
    lines += not_applicable_lines(part)
    return [*lines, ""] if lines else []


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def summary_table(summary: dict[str, Any], granularity: str) -> list[dict[str, Any]]:
    """Rows of one granularity: one per question type, 'overall' (the official printer's
    average), then 'overall, with user-turn evidence' (run_retrieval.py's)."""
    part = summary[granularity]
    groups = [*part["by_type"].items(), ("overall", part["overall"])]
    if "with_user_evidence" in part:  # summaries written before both averages lack it
        groups.append((WITH_USER_EVIDENCE_ROW, part["with_user_evidence"]["overall"]))
    return [
        {"question_type": name, "n": group["n"], **{m: group.get(m) for m in SHOWN_METRICS}}
        for name, group in groups
    ]


def summary_markdown(summary: dict[str, Any], title: str) -> str:
    lines = [f"# {title}", ""]
    for granularity in GRANULARITIES:
        part = summary[granularity]
        lines += [
            f"## Retrieval, {granularity} granularity",
            "",
            f"{part['questions']} questions ({part['abstention']} abstention, "
            f"{part.get('without_user_evidence', 0)} non-abstention without evidence in user "
            "turns, "
            f"{part['errors']} failed, {part.get('not_applicable', 0)} not applicable).",
            "",
            *_provenance_lines(part, granularity),
        ]
        if not_applicable(part):
            lines += ["No figures: retrieval is not applicable to any question (see above).", ""]
            continue
        lines += [
            "| question type | questions | "
            + " | ".join(metric_label(m) for m in SHOWN_METRICS)
            + " |",
            "|---|---:|" + "---:|" * len(SHOWN_METRICS),
        ]
        for row in summary_table(summary, granularity):
            cells = [_cell(row[m]) if row[m] is not None else "-" for m in SHOWN_METRICS]
            lines.append(f"| {row['question_type']} | {row['n']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [summary["note"], ""]
    return "\n".join(lines)
