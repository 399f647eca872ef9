"""summary.md's ingestion part and the empty-memory warnings, in words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lme_bench.providers.calls import calls_text
from lme_bench.report.labels import MODES, count, counted, seconds, words

SHOWN_IDS = 20


def _tool_call_text(totals: dict[str, Any]) -> str:
    """The memory agent's tool calls the harness could not use or left out ("" without one)."""
    if not totals["llm_calls"]:
        return ""
    unusable = totals.get("unusable_tool_calls") or {}
    reasons = counted(unusable)
    text = f" Unusable tool calls: {count(sum(unusable.values()))}"
    text += f" ({reasons})" if unusable else ""
    return text + f"; {count(totals.get('dropped_tool_calls', 0))} left out over the caps."


def _per_turn(totals: dict[str, Any]) -> str:
    value = totals.get("llm_calls_per_turn")
    return "" if value is None else f" ({value:.2f} per turn)"


def ingested_words(totals: dict[str, Any]) -> str:
    """What was ingested: questions, or memory builds where questions share them."""
    if "builds" in totals:
        builds = totals["builds"]
        return f"{count(builds)} memory build{'' if builds == 1 else 's'}"
    return f"{count(totals['questions'])} questions"


def _unfinished_text(totals: dict[str, Any]) -> str:
    """The sessions counted of ingestions that did not finish ("" without one)."""
    unfinished = totals.get("unfinished_sessions") or 0
    if not unfinished:
        return ""
    return (
        f" {count(unfinished)} of these sessions were stored by ingestions that did not finish"
        " (their questions failed or the run stopped); their calls, tokens and cost are counted."
    )


def totals_markdown(totals: dict[str, Any]) -> str:
    agent = (
        f"the memory agent made {count(totals['llm_calls'])} model calls{_per_turn(totals)}, "
        f"{count(totals['input_tokens'])} input / {count(totals['output_tokens'])} output "
        f"tokens, {calls_text(totals)}; "
        if totals["llm_calls"]
        else "no memory agent model calls; "
    )
    return "\n".join(
        [
            f"## Ingestion: {words(totals['modes'], MODES)}",
            "",
            f"{ingested_words(totals)}, {count(totals['sessions'])} sessions, "
            f"{count(totals['turns'])} turns; ingestion {seconds(totals.get('seconds'))} summed"
            f" over {ingested_words(totals)} (not wall time); {agent}"
            f"calls to the memory system: {counted(totals['memory_calls'])}; "
            f"{count(totals['sessions_not_ok'])} sessions not ingested, "
            f"{count(totals['resumed_sessions'])} resumed from a checkpoint."
            + _unfinished_text(totals)
            + _tool_call_text(totals),
            "",
        ]
    )


def _shown(ids: Sequence[str]) -> str:
    return ", ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")


def empty_memory_text(part: Mapping[str, Any]) -> str:
    """One sentence naming the questions whose memory is empty ("" when none is)."""
    if not part.get("empty"):
        return ""
    return (
        f"memory empty after ingestion for {part['empty']} of {part['checked']} questions"
        f" ({_shown(part['question_ids'])})"
    )


def empty_memory_markdown(part: Mapping[str, Any]) -> str:
    """The summary's warning about empty memories ("" when there is none)."""
    if not part.get("empty"):
        return ""
    return (
        f"**Empty memory**: the ingestion of {part['empty']} of {part['checked']} questions"
        f" stored nothing ({_shown(part['question_ids'])}). Empty: {part['rule']}. Their answers"
        " cannot come from memory (attributed `memory-empty` when wrong)."
    )
